import type { DatabaseConfig } from '../store/open.ts'

/** What no log line may show: the tokens in clear, and the database password in each form it may be written. */
export function secretsOf (tokens: string[], database: DatabaseConfig): string[] {
  const secrets = [...tokens]
  if (database.engine !== 'postgres') return secrets
  let url: URL
  try {
    url = new URL(database.url)
  } catch {
    return secrets // the driver will refuse it; nothing to find in it
  }
  for (const raw of [url.password, url.searchParams.get('password') ?? '']) {
    if (raw === '') continue
    secrets.push(raw)
    try {
      secrets.push(decodeURIComponent(raw))
    } catch {}
  }
  return secrets
}
