import { createSocket } from 'node:dgram'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ipaddr from 'ipaddr.js'
import type { Test } from 'tap'

/**
 * A name server for tests, on UDP port 53 of a loopback address of its own, so that a
 * service given `resolvConf` (a resolv.conf naming it) resolves through it as through
 * any other: the port cannot be named in a resolv.conf. Binding port 53 needs root,
 * as CI has.
 */
export interface DnsServer {
  /** A resolv.conf naming this server and no other, for startServer's `resolvConf`. */
  resolvConf: string
  /**
   * The addresses each name has, IPv4 (A records) and IPv6 (AAAA); a name not in it does
   * not exist (NXDOMAIN).
   */
  names: Map<string, string[]>
  /** Names whose queries are never answered, as when their name servers are down. */
  silent: Set<string>
}

const ADDRESS = '127.0.0.153'
// Record types: an IPv4 address, an IPv6 address.
const A = 1
const AAAA = 28

/** Starts the server, closed when the test ends. */
export async function startDnsServer (t: Test): Promise<DnsServer> {
  // Not in t.testdir(), which a later call in the test would empty.
  const directory = mkdtempSync(join(tmpdir(), 'plant-store-dns-'))
  t.teardown(() => rmSync(directory, { recursive: true }))
  const resolvConf = join(directory, 'resolv.conf')
  writeFileSync(resolvConf, `nameserver ${ADDRESS}\n`)
  const server: DnsServer = { resolvConf, names: new Map(), silent: new Set() }
  const socket = createSocket('udp4')
  socket.on('message', (query, peer) => {
    const question = readQuestion(query)
    if (question === undefined) return
    const name = question.name.toLowerCase()
    if (server.silent.has(name)) return
    const addresses = server.names.get(name)
    const kind = question.type === A ? 'ipv4' : question.type === AAAA ? 'ipv6' : undefined
    const records = addresses?.filter((address) => parse(address).kind() === kind)
    socket.send(answer(query, question.end, records), peer.port, peer.address)
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.bind(53, ADDRESS, () => resolve())
  })
  t.teardown(() => socket.close())
  return server
}

/**
 * One spelling of an address: an IPv6 one as WHATWG's URL parser writes it, all in hex.
 * ipaddr.js reads `::a.b.c.d` (IPv4-compatible) as `::ffff:a.b.c.d` (IPv4-mapped).
 */
export function canonicalAddress (address: string): string {
  return address.includes(':') ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address
}

function parse (address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.parse(canonicalAddress(address))
}

/** The first question's name and type, and where it ends; undefined for what is not a query. */
function readQuestion (message: Buffer): { name: string, type: number, end: number } | undefined {
  if (message.length < 12 || message.readUInt16BE(4) < 1) return undefined
  const labels: string[] = []
  let at = 12
  while (at < message.length && message[at] !== 0) {
    const length = message[at]
    if (length > 63) return undefined // a compression pointer has no place in a question
    labels.push(message.toString('latin1', at + 1, at + 1 + length))
    at += 1 + length
  }
  if (at + 5 > message.length) return undefined
  return { name: labels.join('.'), type: message.readUInt16BE(at + 1), end: at + 5 }
}

/** The answer to a query: its header and question, then its records; none given, NXDOMAIN. */
function answer (query: Buffer, questionEnd: number, addresses: string[] | undefined): Buffer {
  const header = Buffer.alloc(12)
  header.writeUInt16BE(query.readUInt16BE(0), 0) // the query's id
  // A response, recursion desired and available; rcode 3 is NXDOMAIN.
  header.writeUInt16BE(0x8180 | (addresses === undefined ? 3 : 0), 2)
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(addresses?.length ?? 0, 6)
  const records = (addresses ?? []).map((address) => {
    const bytes = parse(address).toByteArray()
    const record = Buffer.alloc(12 + bytes.length)
    record.writeUInt16BE(0xc00c, 0) // the name: a pointer to the question's
    record.writeUInt16BE(bytes.length === 4 ? A : AAAA, 2)
    record.writeUInt16BE(1, 4) // class IN
    record.writeUInt32BE(0, 6) // TTL 0: never cached, each query is answered as the test now says
    record.writeUInt16BE(bytes.length, 10)
    record.set(bytes, 12)
    return record
  })
  return Buffer.concat([header, query.subarray(12, questionEnd), ...records])
}
