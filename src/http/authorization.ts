import { TOKEN68 } from '../tokens/rules.ts'

// RFC 9110 token: what an authentication scheme's name is made of.
const SCHEME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,20}$/

const HOW = 'send "Authorization: Bearer <token>"'

/**
 * What is wrong with an Authorization header that cannot carry a bearer token, in words
 * that tell the client how to fix it; undefined when it is absent or well formed (the
 * token itself is then for the registry to judge).
 */
export function authorizationProblem (header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const value = header.trim()
  if (value === '') return `the Authorization header is empty; ${HOW}`
  const space = value.indexOf(' ')
  const scheme = space === -1 ? value : value.slice(0, space)
  if (scheme.toLowerCase() !== 'bearer') {
    if (space === -1) return `the Authorization header has no scheme; ${HOW}, with "Bearer " before the token`
    const named = SCHEME.test(scheme) ? `the ${scheme} scheme` : 'a scheme other than Bearer'
    return `the Authorization header uses ${named}; this API takes only bearer tokens: ${HOW}`
  }
  const token = space === -1 ? '' : value.slice(space + 1).trimStart()
  if (token === '') return `the Authorization header has the Bearer scheme but no token; ${HOW}`
  if (!TOKEN68.test(token)) {
    return 'the bearer token has characters a token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =); send it exactly as it was issued'
  }
  return undefined
}
