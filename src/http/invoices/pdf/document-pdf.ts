import type { Db } from '../../../db/database.ts'
import { organizationSettings } from '../../../identity/organizations.ts'
import type { EstimateView } from '../../../projections/invoice/estimates.ts'
import type { InvoiceView } from '../../../projections/invoice/queries.ts'
import { defaultTemplate } from '../../../projections/invoice/templates.ts'
import { estimatePdfModel, invoicePdfModel } from './pdf-model.ts'
import type { PdfModel, Seller, Template } from './pdf-model.ts'
import { renderPdf } from './render-pdf.ts'

export type RenderedPdf = { fileName: string; bytes: Buffer }

/** The document drawn in its organization's company profile and default template. */
async function rendered(db: Db, orgId: string, model: (org: Seller, template: Template | undefined) => PdfModel): Promise<RenderedPdf> {
  const [org, template] = await Promise.all([organizationSettings(db, orgId), defaultTemplate(db, orgId)])
  const built = model(org, template)
  return { fileName: built.fileName, bytes: await renderPdf(built) }
}

export const invoicePdf = (db: Db, row: InvoiceView): Promise<RenderedPdf> => rendered(db, row.org_id, (org, template) => invoicePdfModel(row, org, template))

export const estimatePdf = (db: Db, row: EstimateView): Promise<RenderedPdf> => rendered(db, row.org_id, (org, template) => estimatePdfModel(row, org, template))

/** The PDF as a mail attachment. */
export const pdfAttachment = (pdf: RenderedPdf) => ({ filename: pdf.fileName, contentType: 'application/pdf', content: pdf.bytes })
