import openapiTS, { astToString, type SchemaObject } from 'openapi-typescript'
import ts from 'typescript'

const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword)

function isInt64 (schema: SchemaObject): boolean {
  return 'format' in schema && schema.format === 'int64'
}

function isNumber (schema: SchemaObject): boolean {
  const types = 'type' in schema ? [schema.type].flat() : []
  return types.includes('integer') || types.includes('number')
}

/**
 * client/src/schema.ts from the contract: openapi-typescript's types, every int64 a bigint,
 * then the names of the properties that are int64, which the client's JSON parser reads exactly.
 */
export async function generateSchema (contract: URL): Promise<string> {
  const int64 = new Set<string>()
  const others = new Set<string>() // numbers that are not int64
  const ast = await openapiTS(contract, {
    silent: true,
    // A default is what the service assumes when a request leaves the field out: optional, not required.
    defaultNonNullable: false,
    transform: (schema: SchemaObject) => isInt64(schema) ? BIGINT : undefined,
    transformProperty (property, schema) {
      const name = ts.isIdentifier(property.name) || ts.isStringLiteral(property.name) ? property.name.text : undefined
      if (name !== undefined && isNumber(schema)) (isInt64(schema) ? int64 : others).add(name)
      return undefined
    }
  })
  // The parser goes by a property's name (strings are left alone): an int64 here must not be another number there.
  const clash = [...int64].filter((name) => others.has(name))
  if (clash.length > 0) throw new Error(`properties both int64 and another number: ${clash.join(', ')}; the client's parser cannot tell them apart`)
  const names = [...int64].sort().map((name) => JSON.stringify(name)).join(', ')
  return `// Generated from openapi.yaml by \`npm run client\` (client/scripts/generate.ts): do not edit.
${astToString(ast)}
/** The properties the contract types as int64: the client reads their JSON integers as bigint. */
export const int64Properties: ReadonlySet<string> = new Set([${names}]);
`
}
