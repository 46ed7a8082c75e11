import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { generateSchema } from './schema.ts'

// `npm run client`, from the repository's root: client/src/schema.ts from openapi.yaml.
// Arguments, for the drift test: the contract and the file to write.
const [contract = 'openapi.yaml', target = 'client/src/schema.ts'] = process.argv.slice(2)
await writeFile(target, await generateSchema(pathToFileURL(resolve(contract))))
process.stdout.write(`wrote ${target} from ${contract}\n`)
