import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Locator, type Page, type Request } from 'playwright-core'
import t, { type Test } from 'tap'
import { NewPlant, PlantListQuery } from '../../schemas/index.ts'
import { startServer } from '../helpers/server.ts'
import { testToken, writeTokens } from '../helpers/tokens.ts'

const CHROMIUM = '/usr/bin/chromium'
// What works on this machine: no network, running as root (hence --no-sandbox).
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'
]
// A token of the tokens file that may create plants and nothing else.
const SCOPED = testToken('swagger-ui', ['plants:write'])
const TOKEN = SCOPED.value
const BODY = '{"id": 4242, "name": "Browser Fern", "tag": "ui"}'
const SCREENSHOT = fileURLToPath(new URL('../../test-artifacts/swagger-ui-create-plant.png', import.meta.url))
const WAIT = 15_000

// Starting the service, Chromium and Swagger UI's bundle takes seconds each on a slow VM;
// tap's default of 30 s for the whole file is too tight.
t.setTimeout(120_000)

t.test('a developer can authorize in Swagger UI with a plants:write token and create a plant with "Try it out", which comes filled with the examples', {
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} not found: this test drives a real Chromium`
}, async (t) => {
  const server = await startServer(t, { API_TOKENS_FILE: writeTokens(`${t.testdir()}/tokens.json`, [SCOPED]) })
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 })
  t.teardown(async () => await browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.setDefaultTimeout(WAIT)
  const problems = await watchForProblems(page, server.url)
  try {
    await createPlantInSwaggerUi(t, page, server.url)
    await listParametersAreFilled(t, page)
    await mkdir(dirname(SCREENSHOT), { recursive: true })
    await page.screenshot({ path: SCREENSHOT, fullPage: true })
  } finally {
    // Checked even when a step above timed out: a Content-Security-Policy that blocks
    // Swagger UI's scripts, styles or calls is named here, not just "waiting for locator".
    t.same(await problems(), {
      pageErrors: [],
      consoleErrors: [],
      cspViolations: [],
      failedRequests: [],
      errorResponses: []
    }, 'no page error, console error, CSP violation, failed load or error status')
  }
})

// Beyond 2^53: a double would round it to 9223372036854776000.
const BIG_ID = '9223372036854775805'
const ALL_SCOPES = 'docs-browser-token-0123456789'

t.test('Swagger UI shows an answer\'s int64 id exactly as the service sent it', {
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} not found: this test drives a real Chromium`
}, async (t) => {
  const server = await startServer(t, { API_TOKENS: ALL_SCOPES })
  const created = await server.request('POST', '/plants', { token: ALL_SCOPES, body: `{"id":${BIG_ID},"name":"Big Fern"}` })
  t.equal(created.statusCode, 200, created.body)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 })
  t.teardown(async () => await browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.setDefaultTimeout(WAIT)
  await page.goto(`${server.url}/docs`)
  await page.getByRole('button', { name: 'Authorize', exact: true }).click()
  const dialog = page.locator('.dialog-ux .modal-ux')
  await dialog.locator('#auth-bearer-value').fill(ALL_SCOPES)
  await dialog.getByRole('button', { name: 'Apply credentials' }).click()
  await dialog.getByRole('button', { name: 'Close' }).click()

  const operation = page.locator('#operations-plants-getPlant')
  await operation.locator('.opblock-summary-control').click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  await operation.locator('tr[data-param-name="id"] input').fill(BIG_ID)
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${server.url}/plants/${BIG_ID}`),
    operation.getByRole('button', { name: 'Execute' }).click()
  ])
  t.match(await response.text(), `"id":${BIG_ID}`, 'the service sent the id exactly')
  await operation.locator('.live-responses-table').waitFor()
  t.equal(await liveStatus(operation), '200')
  const shown = await liveBody(operation)
  t.match(shown, `"id": ${BIG_ID}`, 'the page shows the id exactly, not rounded to a double')
  t.notMatch(shown, '9223372036854776000')
  t.match(shown, '"name": "Big Fern"', 'pretty-printed, as Swagger UI shows JSON')
})

async function createPlantInSwaggerUi (t: Test, page: Page, url: string): Promise<void> {
  await page.goto(`${url}/docs`)
  const operation = page.locator('#operations-plants-addPlant')
  await operation.waitFor()
  t.match(await page.locator('.information-container .title').innerText(), /Plant Store/, 'the spec is rendered')
  t.equal(await page.locator('.errors-wrapper').count(), 0, 'Swagger UI reports no error in the spec')

  await operation.locator('.opblock-summary-control').click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  const body = operation.locator('textarea.body-param__text')
  t.same(JSON.parse(await body.inputValue()), NewPlant.examples[0], '"Try it out" comes filled with the example plant')
  await body.fill(BODY)

  // Before authorizing: the call goes out without a token and the page shows the 401.
  const denied = await execute(page, operation, url)
  t.equal(denied.headers().authorization, undefined, 'no Authorization header before authorizing')
  t.equal(await liveStatus(operation), '401', 'the page shows 401 before authorizing')
  t.match(await liveBody(operation), /missing bearer token/, 'and the error body')

  await page.getByRole('button', { name: 'Authorize', exact: true }).click()
  const dialog = page.locator('.dialog-ux .modal-ux')
  await dialog.locator('#auth-bearer-value').fill(TOKEN)
  // The dialog's Authorize button is labelled "Apply credentials"; once applied it becomes Logout.
  await dialog.getByRole('button', { name: 'Apply credentials' }).click()
  await dialog.getByRole('button', { name: 'Remove authorization' }).waitFor()
  await dialog.getByRole('button', { name: 'Close' }).click()
  await dialog.waitFor({ state: 'detached' })
  await operation.getByRole('button', { name: 'authorization button locked' }).waitFor()

  // Clear the 401 first, so what is read next can only be the new response.
  await operation.getByRole('button', { name: 'Clear' }).click()
  await operation.locator('.live-responses-table').waitFor({ state: 'detached' })
  const created = await execute(page, operation, url)
  t.equal(created.headers().authorization, `Bearer ${TOKEN}`, 'Swagger UI sends the token')
  t.equal(created.postData(), BODY, 'Swagger UI sends the body as typed')
  t.equal(await liveStatus(operation), '200', 'the page shows 200 once authorized')
  const shown = await liveBody(operation)
  t.match(shown, /Browser Fern/, 'the page shows the new plant')
  t.same(JSON.parse(shown), { name: 'Browser Fern', tag: 'ui' }, 'exactly as stored')
  t.match(await operation.locator('.curl-command').innerText(), `Authorization: Bearer ${TOKEN}`, 'the curl shown carries the token')
  await operation.locator('.live-responses-table').scrollIntoViewIfNeeded()
}

/** "Try it out" on GET /plants fills its query parameters with their examples. */
async function listParametersAreFilled (t: Test, page: Page): Promise<void> {
  const operation = page.locator('#operations-plants-listPlants')
  await operation.locator('.opblock-summary-control').click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  for (const [name, schema] of Object.entries(PlantListQuery.properties)) {
    const value = await operation.locator(`tr[data-param-name="${name}"] input`).inputValue()
    t.equal(value, String(schema.examples[0]), `${name} comes filled with its example`)
  }
}

/** Clicks Execute and resolves with the POST /plants the page sent, once the page shows its response. */
async function execute (page: Page, operation: Locator, url: string): Promise<Request> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${url}/plants` && r.request().method() === 'POST'),
    operation.getByRole('button', { name: 'Execute' }).click()
  ])
  await operation.locator('.live-responses-table').waitFor()
  return response.request()
}

async function liveStatus (operation: Locator): Promise<string> {
  return (await operation.locator('.live-responses-table tbody .response-col_status').innerText()).trim()
}

async function liveBody (operation: Locator): Promise<string> {
  return await operation.locator('.live-responses-table .highlight-code code').innerText()
}

/**
 * Records what would show that the page did not work: uncaught errors, console errors,
 * CSP violations, failed loads and error statuses. The one expected error is the
 * deliberate 401 on POST /plants, which Chromium also logs to the console.
 */
async function watchForProblems (page: Page, url: string): Promise<() => Promise<Record<string, string[]>>> {
  const pageErrors: string[] = []
  const consoleErrors: string[] = []
  const failedRequests: string[] = []
  const errorResponses: string[] = []
  const plants = `${url}/plants`
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    const at = message.location().url
    if (!(at === plants && /status of 401/.test(message.text()))) consoleErrors.push(`${message.text()} (${at})`)
  })
  page.on('requestfailed', (request) => failedRequests.push(`${request.url()}: ${request.failure()?.errorText}`))
  page.on('response', (response) => {
    if (response.status() >= 400 && !(response.status() === 401 && response.url() === plants)) {
      errorResponses.push(`${response.status()} ${response.request().method()} ${response.url()}`)
    }
  })
  // Not every violation reaches the console (report-only policies, for one); this event sees them all.
  // Init scripts are injected by the debugger protocol, so the page's own CSP cannot block this one.
  await page.addInitScript({
    content: `window.__cspViolations = []
      document.addEventListener('securitypolicyviolation', (e) => {
        window.__cspViolations.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber)
      })`
  })
  return async () => ({
    pageErrors,
    consoleErrors,
    cspViolations: await page.evaluate('window.__cspViolations ?? []').then((v) => v as string[], (err) => [`could not read: ${err}`]),
    failedRequests,
    errorResponses
  })
}
