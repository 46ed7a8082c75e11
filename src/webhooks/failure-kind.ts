// What a delivery log says of a failed connection or answer: the kind of problem. The error's
// own message can name the receiver's addresses (connect ECONNREFUSED 10.1.2.3:443) or the
// names its TLS certificate holds; those go to the operator's log only.

const KINDS: Record<string, string> = {
  ERR_INVALID_URL: 'the url is not an absolute URL',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was closed before an answer came',
  EPIPE: 'the connection was closed before an answer came',
  UND_ERR_SOCKET: 'the connection was closed before an answer came',
  UND_ERR_CLOSED: 'the connection was closed before an answer came',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the host cannot be reached',
  EHOSTDOWN: 'the host cannot be reached',
  ENETDOWN: 'the host cannot be reached',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the TLS certificate is not valid for the host',
  CERT_HAS_EXPIRED: 'the TLS certificate has expired',
  CERT_NOT_YET_VALID: 'the TLS certificate is not valid yet',
  CERT_REVOKED: 'the TLS certificate is revoked',
  UND_ERR_HEADERS_OVERFLOW: 'the answer\'s headers are too long',
  UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE: 'the answer is too long'
}

/** The kind of failure an error's code tells, in the words the delivery log shows. */
export function failureKind (code: string | undefined, timeoutMs: number): string {
  if (code === undefined) return 'the attempt failed'
  const kind = KINDS[code]
  if (kind !== undefined) return kind
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return `no connection within ${timeoutMs} ms`
  // OpenSSL's verification codes (DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE…).
  if (/CERT|SIGNATURE|ISSUER/.test(code)) return 'the TLS certificate is not trusted'
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO') return 'the TLS handshake failed'
  if (code.startsWith('HPE_') || code === 'UND_ERR_INFO') return 'the answer is not valid HTTP'
  // A code names a kind of failure, never the peer's own words.
  return `the attempt failed (${code})`
}
