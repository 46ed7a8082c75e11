import type { FastifyInstance } from 'fastify'
import { schemaChecker, type Json as Doc } from './document.ts'

// The OpenAPI document of an app under the HTTP fuzz test, read once per app, as its
// answers are checked against it.

/** The document's paths, as a contract checker reads them: each template's operations and a checker of its answers' bodies. */
export interface Contract {
  paths: Array<{ template: string, pattern: RegExp, operations: Doc }>
  check: (pointer: string) => (value: unknown) => boolean
}

const contracts = new WeakMap<FastifyInstance, Contract>()

export async function contractOf (app: FastifyInstance): Promise<Contract> {
  const known = contracts.get(app)
  if (known !== undefined) return known
  const doc = (await app.inject({ url: '/docs/json' })).json()
  const paths = Object.entries<Doc>(doc.paths).map(([template, operations]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    operations
  }))
  // JSON.parse reads an id beyond 2^53 inexactly, but still as an integer within int64's range.
  const checker = schemaChecker(doc, (value) => Number.isInteger(value) && Math.abs(value) <= 2 ** 63)
  const checks = new Map<string, (value: unknown) => boolean>()
  const contract = {
    paths,
    check: (pointer: string) => {
      if (!checks.has(pointer)) checks.set(pointer, checker(pointer))
      return checks.get(pointer)!
    }
  }
  contracts.set(app, contract)
  return contract
}
