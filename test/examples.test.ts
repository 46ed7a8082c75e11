import t from 'tap'
import { testApp } from './helpers/app.ts'
import { pointerSegment, schemaChecker, type Json } from './helpers/document.ts'

// Swagger UI's "Try it out" fills every parameter and request body with its example and
// shows the example of every answer: without one it sends `{"id":0,"name":"string","tag":"string"}`
// into the real store.

/** The operations of the document, the webhook it calls included, by a readable name. */
function operations (doc: Json): Array<[string, Json]> {
  return [...Object.entries<Json>(doc.paths), ...Object.entries<Json>(doc.webhooks)]
    .flatMap(([path, item]) => Object.entries<Json>(item).map(([method, operation]): [string, Json] => [`${method.toUpperCase()} ${path}`, operation]))
}

/** An Example Object's value, through its `$ref` into `components.examples` when it is one. */
function valueOf (doc: Json, example: Json): unknown {
  return example.$ref === undefined ? example.value : doc.components.examples[example.$ref.replace('#/components/examples/', '')].value
}

/** The examples a parameter or media type carries itself, as Swagger UI reads them. */
function ownExamples (doc: Json, holder: Json): unknown[] {
  return [...'example' in holder ? [holder.example] : [], ...Object.values<Json>(holder.examples ?? {}).map((example) => valueOf(doc, example))]
}

/** A media type's examples: its own and its schema's (the shared schema's, when it names one). */
function mediaExamples (doc: Json, media: Json): unknown[] {
  const ref: string | undefined = media.schema.$ref
  const schema = ref === undefined ? media.schema : doc.components.schemas[ref.replace('#/components/schemas/', '')]
  return [...ownExamples(doc, media), ...schema.examples ?? []]
}

interface Found {
  /** Where the example is, and the schema it must satisfy, as JSON pointers into the document. */
  at: string
  schema: string
  value: unknown
}

/**
 * Every example anywhere in the document: a schema's `examples` list (JSON Schema) holds
 * values of that schema; a parameter, header or media type holds its `example`, or an
 * `examples` map, for its `schema`.
 */
function allExamples (doc: Json, node: unknown = doc, at = ''): Found[] {
  if (node === null || typeof node !== 'object') return []
  const holder = node as Json
  const found: Found[] = []
  if (Array.isArray(holder.examples)) {
    found.push(...holder.examples.map((value, i) => ({ at: `${at}/examples/${i}`, schema: at, value })))
  } else if ('schema' in holder) {
    if ('example' in holder) found.push({ at: `${at}/example`, schema: `${at}/schema`, value: holder.example })
    for (const [name, example] of Object.entries<Json>(holder.examples ?? {})) {
      found.push({ at: `${at}/examples/${name}`, schema: `${at}/schema`, value: valueOf(doc, example) })
    }
  }
  for (const [key, child] of Object.entries(holder)) {
    if (key !== 'examples' && key !== 'example') found.push(...allExamples(doc, child, `${at}/${pointerSegment(key)}`))
  }
  return found
}

t.test('every parameter, request body and successful answer with a body has an example', async (t) => {
  const app = await testApp(t)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  for (const [name, operation] of operations(doc)) {
    for (const parameter of operation.parameters ?? []) {
      t.ok(ownExamples(doc, parameter).length > 0, `${name}: the ${parameter.in} parameter ${parameter.name} has an example`)
    }
    for (const [type, media] of Object.entries<Json>(operation.requestBody?.content ?? {})) {
      t.ok(mediaExamples(doc, media).length > 0, `${name}: the ${type} body has an example`)
    }
    for (const [status, response] of Object.entries<Json>(operation.responses)) {
      if (!status.startsWith('2')) continue
      for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
        t.ok(mediaExamples(doc, media).length > 0, `${name}: the ${status} ${type} answer has an example`)
      }
    }
  }
})

t.test('every example of the document is valid against its own schema', async (t) => {
  const app = await testApp(t)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  // Beyond 2^53 an example could not be a JSON number that the document keeps exactly.
  const checker = schemaChecker(doc, Number.isSafeInteger)
  // The check can fail: an id that is no integer is refused, its message naming the field.
  const plant = checker('/components/schemas/NewPlant')
  t.notOk(plant({ id: 1.5, name: 'Monstera' }), 'an invalid plant is refused')
  t.same([...new Set(plant.errors?.map((error) => error.instancePath))], ['/id'], 'naming the field')

  const found = allExamples(doc)
  t.ok(found.length > 0, 'the document has examples')
  for (const { at, schema, value } of found) {
    const valid = checker(schema)
    t.ok(valid(value), `${at} is valid`, { value, errors: valid.errors })
  }
})
