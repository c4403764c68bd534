import { Ajv2020 } from 'ajv/dist/2020.js'
import type { ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { appendFile } from 'node:fs/promises'
import { join } from 'node:path'

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

type Operation = { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }
type Document = { paths?: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, unknown> } }

type Checker = { document: Document; validatorFor: (path: string, method: string, status: number) => ValidateFunction | null; errorsText: (errors: ValidateFunction['errors']) => string }

/** Validators over one document, compiled lazily, once per operation and status. */
function checkerOf(document: Document): Checker {
  let ajv: Ajv2020 | undefined
  const validators = new Map<string, ValidateFunction | null>()
  const compiler = () => {
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, allErrors: true })
      addFormats.default(ajv)
      ajv.addSchema({ $id: 'openapi', components: document.components ?? {} })
    }
    return ajv
  }
  const validatorFor = (path: string, method: string, status: number): ValidateFunction | null => {
    const key = `${method} ${path} ${status}`
    if (validators.has(key)) return validators.get(key)!
    const responses = document.paths?.[path]?.[method]?.responses
    const schema = (responses?.[String(status)] ?? responses?.default)?.content?.['application/json']?.schema
    // `#/components/…` in an operation means the document's components.
    const validator = schema === undefined ? null : compiler().compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')))
    validators.set(key, validator)
    return validator
  }
  return { document, validatorFor, errorsText: (errors) => compiler().errorsText(errors) }
}

/** This process's checkers of documents shared through OPENAPI_DOCUMENT_DIR, by the fingerprint of their routes. */
const sharedCheckers = new Map<string, Checker>()

/**
 * The checker of an app's document. Generating the document from some 700 routes cost each test
 * app about 0.6 s of CPU, and the suite builds hundreds of apps; so when the suite's runner names a
 * folder for its run (OPENAPI_DOCUMENT_DIR: one run, one version of the code), the first app with a
 * given set of routes writes the document there and every other app with the same routes, in any
 * test process of the run, reads it (and, in one process, shares the compiled validators).
 */
function checkerFor(app: FastifyInstance, routes: readonly string[]): Checker {
  const dir = process.env.OPENAPI_DOCUMENT_DIR
  if (!dir) return checkerOf(app.swagger() as Document)
  const fingerprint = createHash('sha256').update([...routes].sort().join('\n')).digest('hex').slice(0, 16)
  const known = sharedCheckers.get(fingerprint)
  if (known) return known
  const file = join(dir, `openapi-${fingerprint}.json`)
  let document: Document
  if (existsSync(file)) document = JSON.parse(readFileSync(file, 'utf8')) as Document
  else {
    document = app.swagger() as Document
    // Written whole then renamed: a process reading meanwhile sees no file or the whole of it.
    const partial = `${file}.${process.pid}`
    writeFileSync(partial, JSON.stringify(document))
    renameSync(partial, file)
  }
  const checker = checkerOf(document)
  sharedCheckers.set(fingerprint, checker)
  return checker
}

/**
 * Test mode only (issue 18): every JSON answer is checked against the OpenAPI document the server
 * publishes, not only against the zod schema it was serialized by, so the document and the server
 * cannot drift (the 3.0 document once said no enum took null while the server answered null). A
 * mismatch throws, which the suite sees as a failed request.
 */
export function checkAnswersAgainstDocument(app: FastifyInstance): void {
  const routes: string[] = []
  app.addHook('onRoute', (route) => void routes.push(`${String(route.method)} ${route.url}`))
  let checker: Checker | undefined

  // How many answers were checked, for the suite's summary (test/run.ts sums the files of ANSWER_COUNT_DIR).
  let checked = 0
  const countDir = process.env.ANSWER_COUNT_DIR
  if (countDir) app.addHook('onClose', async () => appendFile(join(countDir, `${process.pid}.count`), `${checked}\n`))

  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url
    // HEAD answers no body (fastify runs the GET route and drops it).
    if (!route?.startsWith('/api/') || request.method === 'HEAD' || typeof payload !== 'string' || reply.statusCode === 204 || !String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload
    // A route that declares no answers (a test's own route), or that the document hides (a 405 of a method the spec leaves out), promises nothing to check.
    const declared = request.routeOptions.schema as { response?: unknown; hide?: boolean } | undefined
    if (!declared?.response || declared.hide) return payload
    const path = route.replace(/:(\w+)/g, '{$1}')
    checker ??= checkerFor(app, routes)
    if (!checker.document.paths?.[path]) return payload
    const validate = checker.validatorFor(path, request.method.toLowerCase(), reply.statusCode)
    // Server faults (500, 503 while the database is away) are not promised by any operation.
    if (validate === null && reply.statusCode >= 500) return payload
    const problem =
      validate === null
        ? `the document has no JSON answer ${reply.statusCode}`
        : !isJson(payload)
          ? 'the answer is not JSON'
          : validate(JSON.parse(payload))
            ? undefined
            : `the answer does not match the document: ${checker.errorsText(validate.errors).slice(0, 500)}`
    checked++
    if (problem === undefined) return payload
    // Answered as a 500 so the test that made the request fails, saying why (throwing here would re-enter the hook).
    const message = `${request.method} ${path} ${reply.statusCode}: ${problem}`
    request.log.error({ route: path, status: reply.statusCode }, message)
    void reply.code(500)
    return JSON.stringify({ error: true, errors: message })
  })
}
