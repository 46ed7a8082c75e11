import { writeFile } from 'node:fs/promises'
import { generateContract } from './contract.ts'

// `npm run openapi`: rewrites the committed contract from the routes' schemas.
await writeFile('openapi.yaml', await generateContract())
process.stdout.write('wrote openapi.yaml\n')
