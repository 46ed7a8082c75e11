import { existsSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

// This module is src/process/project.ts from source, dist/src/process/project.js once built.
const PACKAGE_JSON = new URL(existsSync(new URL('../../package.json', import.meta.url)) ? '../../package.json' : '../../../package.json', import.meta.url)

/**
 * The project's own directory, the one holding its package.json, found from this
 * module's place rather than the working directory: whatever folder the service is
 * started from, its default database and development token land in one place.
 */
export const PROJECT_DIR = dirname(fileURLToPath(PACKAGE_JSON))

const manifest = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8'))

/** The service's version, as package.json states it; read once. */
export const VERSION: string = manifest.version

/** The Node.js versions the service runs on: package.json's `engines.node`, such as `^22.12.0 || ^24.0.0`. */
export const NODE_RANGE: string = manifest.engines.node
