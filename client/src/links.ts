/** The target of the `rel="next"` link of an RFC 8288 `Link` header, if there is one. */
export function nextLink (header: string | null): string | undefined {
  for (const link of header?.split(/,(?=\s*<)/) ?? []) {
    const [, target, params] = /^\s*<([^>]*)>(.*)$/.exec(link) ?? []
    // rel may list several relations: rel="next last".
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params ?? '')
    if (target !== undefined && rel !== null && (rel[1] ?? rel[2]).toLowerCase().split(/\s+/).includes('next')) return target
  }
  return undefined
}
