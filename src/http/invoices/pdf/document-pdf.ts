import { buffer } from 'node:stream/consumers'
import type { TemplateLogo } from '../../../commands/invoice/template.ts'
import type { Db } from '../../../db/database.ts'
import type { FileStore } from '../../../files/file-store.ts'
import { organizationSettings } from '../../../identity/organizations.ts'
import type { EstimateView } from '../../../projections/invoice/estimates.ts'
import type { InvoiceView } from '../../../projections/invoice/queries.ts'
import { defaultTemplate } from '../../../projections/invoice/templates.ts'
import { estimatePdfModel, invoicePdfModel } from './pdf-model.ts'
import type { PdfModel, Seller, Template } from './pdf-model.ts'
import { renderPdf } from './render-pdf.ts'

export type RenderedPdf = { fileName: string; bytes: Buffer }

/** The formats pdfkit draws; a GIF or WebP logo is left out of the PDF (the apps still show it). */
const DRAWN = new Set(['image/png', 'image/jpeg'])

/** The logo's bytes where a PDF can draw them; none when the file store has lost the file, rather than no PDF at all. */
async function drawableLogo(files: FileStore, logo: TemplateLogo | null | undefined): Promise<Buffer | undefined> {
  if (!logo || !DRAWN.has(logo.content_type)) return undefined
  const stream = await files.open(logo.storage_key)
  return stream && buffer(stream)
}

/** The document drawn in its organization's company profile and default template (its colours, texts and logo). */
async function rendered(db: Db, files: FileStore, orgId: string, model: (org: Seller, template: Template | undefined) => PdfModel): Promise<RenderedPdf> {
  const [org, template] = await Promise.all([organizationSettings(db, orgId), defaultTemplate(db, orgId)])
  const built = { ...model(org, template), logo: await drawableLogo(files, template?.logo) }
  return { fileName: built.fileName, bytes: await renderPdf(built) }
}

export const invoicePdf = (db: Db, files: FileStore, row: InvoiceView): Promise<RenderedPdf> => rendered(db, files, row.org_id, (org, template) => invoicePdfModel(row, org, template))

export const estimatePdf = (db: Db, files: FileStore, row: EstimateView): Promise<RenderedPdf> => rendered(db, files, row.org_id, (org, template) => estimatePdfModel(row, org, template))

/** The PDF as a mail attachment. */
export const pdfAttachment = (pdf: RenderedPdf) => ({ filename: pdf.fileName, contentType: 'application/pdf', content: pdf.bytes })
