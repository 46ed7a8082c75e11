import { ALL_SCOPES } from '../../schemas/scopes.ts'
import { loadTokensFile, TokensFileError } from '../tokens/file.ts'
import { hashToken, type Token } from '../tokens/registry.ts'
import { tokenFault } from '../tokens/rules.ts'
import { ConfigError } from './error.ts'

export function apiTokens (raw: string): string[] {
  const tokens = raw.split(',').map((t) => t.trim()).filter((t) => t !== '')
  tokens.forEach((token, i) => {
    const fault = tokenFault(token)
    if (fault !== undefined) throw new ConfigError(`API_TOKENS: token ${i + 1} ${fault}`)
  })
  return tokens
}

export function fileTokens (file: string): Token[] {
  try {
    return loadTokensFile(file)
  } catch (err) {
    throw new ConfigError(`API_TOKENS_FILE ${(err as TokensFileError).message}`)
  }
}

// API_TOKENS predates scopes: each of its tokens, and the generated one, may do everything.
export function everyScope (name: string, value: string): Token {
  return { name, hash: hashToken(value), scopes: new Set(ALL_SCOPES) }
}
