import { FormatRegistry } from '@sinclair/typebox'

// JSON Schema's `uri`, checked as the service reads a URL: absolute to WHATWG's parser, which
// also takes an international host name or path (normalized to punycode and percent-escapes).
FormatRegistry.Set('uri', (value) => URL.canParse(value))

/**
 * A URL whose scheme is http or https, in any case (URL schemes are case-insensitive), with
 * no `@` before the path: no user name or password. A backslash ends the host as `/` does.
 */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^@/?#\\\\]*(?:[/?#\\\\]|$)'
