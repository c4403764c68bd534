import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { templateDecider, templateStream } from '../../commands/invoice/template.ts'
import type { TemplateCommand, TemplateFields, TemplateLogo } from '../../commands/invoice/template.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, ValidationError } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { listTemplates, templateOf } from '../../projections/invoice/templates.ts'
import type { TemplateView } from '../../projections/invoice/templates.ts'
import { requireAdmin, viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { pageLinks } from '../kernel/page-links.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { UploadedFileSchema } from '../kernel/schemas/notes.ts'
import type { UploadedFile } from '../kernel/bodies.ts'
import { adoptSniffedUpload, sendStoredFile } from '../kernel/uploads.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const text = (max: number) => z.preprocess((v) => (v === null ? '' : v), z.string().max(max)).optional()
// Substituted into the invoice's stylesheet: anything but six hex digits would print every invoice with a broken colour.
const Color = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'Enter a colour as #RRGGBB.').optional()

const TemplateBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(100).optional().describe('Required when creating'),
  primary_color: Color.describe('#RRGGBB; default #3B82F6'),
  secondary_color: Color.describe('#RRGGBB; default #1E40AF'),
  template_html: text(200_000).describe('Read back only from `editor/` (admins)'),
  template_css: text(200_000).describe('Read back only from `editor/` (admins)'),
  default_notes: text(10_000),
  default_terms: text(10_000),
  footer_text: text(10_000),
  is_default: formBoolean(z.boolean()).optional().describe("true: this organization's default (the previous one is unset)"),
  logo: UploadedFileSchema.optional().describe('multipart/form-data: a PNG, JPEG, GIF or WebP image (its type read from its bytes), replacing the last logo'),
})

/** What a browser shows in an <img> and what the original's ImageField took; SVG (a document that can run script) is not among them. */
const LOGO_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])
const LOGO_ANSWER = { description: 'The logo, under the content type sniffed from its bytes at upload', content: Object.fromEntries([...LOGO_TYPES].map((type) => [type, { schema: z.string().describe("The image's bytes") }])) }

/** The original's InvoiceTemplateListSerializer: never the markup itself, only whether there is some and its size. */
const Template = z.object({
  id: z.uuid(), name: z.string(), is_default: z.boolean(), primary_color: z.string(), secondary_color: z.string(),
  has_logo: z.boolean(), has_custom_html: z.boolean(), has_custom_css: z.boolean(), custom_html_bytes: z.number().int(),
  default_notes: z.string(), default_terms: z.string(), footer_text: z.string(),
  used_on_invoices: z.number().int().describe('0: invoices do not name a template yet'), created_at: z.string(), updated_at: z.string(), updated_by: z.string().nullable(),
})
const Editor = Template.extend({ template_html: z.string(), template_css: z.string(), logo: z.string().nullable().describe("The logo's path (`logo/`), null without one") })
const Written = z.object({ error: z.literal(false), message: z.string(), template: Template })

function templateBody(row: TemplateView): z.infer<typeof Template> {
  const { id, name, is_default, primary_color, secondary_color, default_notes, default_terms, footer_text } = row
  return {
    id, name, is_default, primary_color, secondary_color, default_notes, default_terms, footer_text,
    has_logo: row.logo !== null, has_custom_html: row.template_html !== '', has_custom_css: row.template_css !== '', custom_html_bytes: Buffer.byteLength(row.template_html),
    used_on_invoices: 0, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(), updated_by: row.updated_by_name,
  }
}

/**
 * Invoice templates (the original's InvoiceTemplate views): any member reads the catalogue, an admin
 * changes it (403 otherwise) and alone reads a template's markup (`editor/`): the HTML and CSS are
 * kept out of every other answer, so no client can drop them into a page by mistake.
 */
export function templateRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const found = async (orgId: string, id: string) => {
    const row = await templateOf(db, orgId, id)
    if (!row) throw new NotFoundError('Template not found')
    return row
  }
  const facts = (request: Parameters<typeof callerOf>[0]) => {
    const caller = callerOf(request)
    return { orgId: caller.orgId, actor: { profileId: caller.profileId, isAdmin: caller.isAdmin, isSuperuser: false }, at: clock().toISOString() }
  }
  const refuseNonImages = (contentType: string) => {
    if (!LOGO_TYPES.has(contentType)) throw new ValidationError({ logo: ['Upload a PNG, JPEG, GIF or WebP image.'] })
  }
  /**
   * Runs a create or an update, with the logo when one was uploaded: an image is moved into the
   * file store first and named by the command (removed again if the command is refused); any other
   * file is refused before anything is written.
   */
  const command = async (request: Parameters<typeof callerOf>[0], reply: Parameters<typeof requestCommands>[2], streamId: string, upload: UploadedFile | undefined, made: (logo?: TemplateLogo) => TemplateCommand) => {
    const commands = requestCommands(deps, request, reply)
    const run = async (logo?: TemplateLogo) => {
      const next = made(logo)
      await commands.run(templateDecider, templateStream(streamId), next, { expectNew: next.type === 'CreateTemplate' })
      await commands.settle()
    }
    await (upload ? adoptSniffedUpload(files, callerOf(request).orgId, upload, run, refuseNonImages) : run())
  }

  return async (app) => {
    app.get('/api/invoices/templates/', { schema: { tags: TAGS, summary: 'Invoice templates, the default first, then by name (any member)', querystring: PageQuery, response: { 200: z.object({ count: z.number().int(), next: z.string().nullable(), previous: z.string().nullable(), results: z.array(Template) }), ...errors } } }, async (request) => {
      const { limit, offset } = request.query
      const { count, rows } = await listTemplates(db, viewerOf(request).orgId, { limit, offset })
      return { count, ...pageLinks(request, { count, limit, offset }), results: rows.map(templateBody) }
    })

    app.post('/api/invoices/templates/', { schema: { tags: TAGS, summary: 'Add an invoice template (admins)', body: TemplateBody, response: { 201: Written, ...errors } } }, async (request, reply) => {
      requireAdmin(request)
      const { logo: upload, ...fields } = request.body
      if (!fields.name) return reply.code(400).send({ error: true as const, errors: { name: ['This field is required.'] } })
      const id = randomUUID()
      await command(request, reply, id, upload, (logo) => ({ type: 'CreateTemplate', templateId: id, fields: fields as Partial<TemplateFields>, ...(logo && { logo }), ...facts(request) }))
      return reply.code(201).send({ error: false as const, message: 'Template created', template: templateBody(await found(viewerOf(request).orgId, id)) })
    })

    app.get('/api/invoices/templates/:id/', { schema: { tags: TAGS, summary: 'One invoice template, bare, without its markup (any member)', params: IdParams, response: { 200: Template, ...errors } } }, async (request) => templateBody(await found(viewerOf(request).orgId, request.params.id)))

    app.put('/api/invoices/templates/:id/', { schema: { tags: TAGS, summary: 'Change an invoice template: the fields sent (admins)', params: IdParams, body: TemplateBody, response: { 200: Written, ...errors } } }, async (request, reply) => {
      requireAdmin(request)
      const { logo: upload, ...fields } = request.body
      await command(request, reply, request.params.id, upload, (logo) => ({ type: 'UpdateTemplate', fields: fields as Partial<TemplateFields>, ...(logo && { logo }), ...facts(request) }))
      return { error: false as const, message: 'Template updated', template: templateBody(await found(viewerOf(request).orgId, request.params.id)) }
    })

    app.delete('/api/invoices/templates/:id/', { schema: { tags: TAGS, summary: 'Delete an invoice template (admins)', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      requireAdmin(request)
      const commands = requestCommands(deps, request, reply)
      await commands.run(templateDecider, templateStream(request.params.id), { type: 'DeleteTemplate', ...facts(request) })
      await commands.settle()
      return { error: false as const, message: 'Template deleted' }
    })

    app.get('/api/invoices/templates/:id/editor/', { schema: { tags: TAGS, summary: "A template with its HTML and CSS, for the editor (admins): bind them to a form field's value, never into a page", params: IdParams, response: { 200: Editor, ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const row = await found(orgId, request.params.id)
      return { ...templateBody(row), template_html: row.template_html, template_css: row.template_css, logo: row.logo ? `/api/invoices/templates/${row.id}/logo/` : null }
    })

    app.get('/api/invoices/templates/:id/logo/', { schema: { tags: TAGS, summary: "A template's logo, as uploaded (any member); 404 without one", params: IdParams, response: { 200: LOGO_ANSWER, ...errors } } }, async (request, reply) => {
      const { logo } = await found(viewerOf(request).orgId, request.params.id)
      if (!logo) throw new NotFoundError('This template has no logo')
      return sendStoredFile(reply, files, logo)
    })
  }
}
