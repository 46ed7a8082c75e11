// RFC 6750 token68: what may follow "Bearer " in an Authorization header.
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/
// Shorter tokens can be guessed or remembered; generated ones are 32 characters.
const MIN_TOKEN_LENGTH = 16

/**
 * What is wrong with a token given in clear (API_TOKENS, the development token file),
 * as the end of a sentence naming it; undefined when nothing is.
 */
export function tokenFault (token: string): string | undefined {
  if (!TOKEN68.test(token)) return 'has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)'
  if (token.length < MIN_TOKEN_LENGTH) return `is ${token.length} characters long; a token needs at least ${MIN_TOKEN_LENGTH} to be secret`
  return undefined
}
