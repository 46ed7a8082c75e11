import { InvalidJson } from './errors.ts'

// What the parts of the JSON body parser share about the text they read: the cursor
// the structure parser hands to the string and number scanners, and how an error
// message shows a piece of the input. The input is whatever a client sent, so what
// a message echoes is cut short and shown as printable ASCII: no body can make a
// long message, or put something invisible in a log.

/** The body's text, and how far the parse has read it: each scanner moves pos past what it read. */
export interface Cursor {
  readonly text: string
  pos: number
}

// Echoed input is cut to this many characters, so an error message stays short whatever was sent.
const ECHO_LENGTH = 40

// The character codes this file compares against, its own rather than imported: see json-body.ts.
const SPACE = 0x20
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** The error for what is at `at`, a character or the end of the text, where the grammar wanted `expected`. */
export function unexpected (text: string, at: number, expected: string): Error {
  if (at >= text.length) return new InvalidJson(`unexpected end at position ${at}, expected ${expected}`)
  return new InvalidJson(`unexpected character ${character(text, at)} at position ${at}, expected ${expected}`)
}

/** One character of the input, for an error message: quoted if printable ASCII, else its code point. */
export function character (text: string, at: number): string {
  const c = text.codePointAt(at) as number
  return c >= SPACE && c < 0x7f ? JSON.stringify(String.fromCharCode(c)) : codePoint(c)
}

export function codePoint (c: number): string {
  return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`
}

export function cut (literal: string): string {
  return literal.length > ECHO_LENGTH ? literal.slice(0, ECHO_LENGTH) + '…' : literal
}

/**
 * A key for an error message: quoted, cut to ECHO_LENGTH characters, and only printable
 * ASCII shown as it is, so nothing invisible (controls, bidirectional overrides…) reaches
 * a log or a terminal.
 */
export function echo (key: string): string {
  let shown = ''
  for (let i = 0; i < key.length;) {
    const c = key.codePointAt(i) as number
    const piece = c === QUOTE || c === BACKSLASH
      ? '\\' + key[i]
      : c >= SPACE && c < 0x7f ? key[i] : `\\u{${c.toString(16)}}`
    if (shown.length + piece.length > ECHO_LENGTH) return `"${shown}…"`
    shown += piece
    i += c > 0xffff ? 2 : 1
  }
  return `"${shown}"`
}
