import fc from 'fast-check'
import ipaddr from 'ipaddr.js'

// Any url fast-check can draw, for the address policy's properties, and the test's own reading
// of the ranges no webhook may go to, to judge its answers by.

/** The host of a URL as WHATWG URL reads it, brackets removed; undefined when it is not a URL. */
export function hostOf (url: string): string | undefined {
  try {
    return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1')
  } catch {
    return undefined
  }
}

// Ranges no webhook may go to, by the tests' own reading (not the policy's).
const NOT_PUBLIC_RANGES = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16',
  '224.0.0.0/4', '240.0.0.0/4', '::/128', '::1/128', '::ffff:0:0/96', 'fc00::/7', 'fe80::/10', 'ff00::/8', '64:ff9b::/96', '2002::/16']
  .map((cidr) => ipaddr.parseCIDR(cidr))

export function inNotPublicRange (address: string): boolean {
  const parsed = ipaddr.parse(address)
  return NOT_PUBLIC_RANGES.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits)) ||
    (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() && inNotPublicRange(parsed.toIPv4Address().toString()))
}

export const octet = fc.integer({ min: 0, max: 255 })
export const anyUrl = fc.oneof(
  fc.webUrl(),
  fc.webUrl({ validSchemes: ['https'], authoritySettings: { withIPv4: true, withIPv6: true, withIPv4Extended: true, withPort: true } }),
  fc.webUrl({ validSchemes: ['https'], authoritySettings: { withUserInfo: true }, withQueryParameters: true, withFragments: true }),
  fc.ipV4().map((ip) => `https://${ip}/hook`),
  fc.ipV4Extended().map((ip) => `https://${ip}/hook`),
  fc.ipV6().map((ip) => `https://[${ip}]/hook`),
  fc.domain().map((name) => `https://${name}/hook`),
  fc.tuple(fc.domain(), fc.integer({ min: 0, max: 65535 })).map(([name, port]) => `https://${name}:${port}/`),
  fc.tuple(octet, octet, octet, octet).map((parts) => `https://${parts.join('.')}/`),
  fc.constantFrom('https://localhost/', 'https://LOCALHOST./', 'https://metadata.google.internal/', 'https://0/', 'https://[::]/'),
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string().map((s) => `https://${s}`),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => `https://${s}.example/`)
)
