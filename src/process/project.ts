import { existsSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

// This module is src/process/project.ts from source, dist/src/process/project.js once built.
const PACKAGE_JSON = new URL(existsSync(new URL('../../package.json', import.meta.url)) ? '../../package.json' : '../../../package.json', import.meta.url)

/** The directory holding package.json, not the working directory: the default database lives there. */
export const PROJECT_DIR = dirname(fileURLToPath(PACKAGE_JSON))

const manifest = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8'))

/** package.json's version. */
export const VERSION: string = manifest.version

/** package.json's `engines.node`. */
export const NODE_RANGE: string = manifest.engines.node
