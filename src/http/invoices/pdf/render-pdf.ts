import { formatMoney } from './pdf-model.ts'
import type { PdfModel } from './pdf-model.ts'

/**
 * Draws a PdfModel on A4 with pdfkit's built-in Helvetica (no font file, no native build): the
 * seller and the heading, the client and the document's facts, its status, the lines, the tax per
 * category, the totals, the payments, notes, terms and the template's footer. Rows that do not fit
 * go to a new page, whose table repeats its header. The Info dictionary's dates are the model's
 * `createdAt` and pdfkit derives the file ID from it, so the same facts render the same bytes.
 */
const LEFT = 50
const RIGHT = 545.28
const WIDTH = RIGHT - LEFT
const BOTTOM = 841.89 - 60
const INK = '#1f2937'
const MUTED = '#6b7280'
const RULE = '#e5e7eb'

type Doc = PDFKit.PDFDocument
type Column = { title: string; width: number; align: 'left' | 'right' }

// Beyond ASCII and Latin-1, the standard fonts' WinAnsi encoding holds only these characters.
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ')
const encodable = (ch: string) => {
  const code = ch.codePointAt(0)!
  return ch === '\n' || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(ch)
}

/** Text the standard fonts can draw: other letters lose their accents where that makes them drawable (ő → o), else become "?". */
export function printable(text: string): string {
  return [...text.replaceAll('\t', ' ')].map((ch) => {
    if (encodable(ch)) return ch
    const bare = ch.normalize('NFKD').replace(/\p{M}/gu, '')
    return bare !== '' && [...bare].every(encodable) ? bare : '?'
  }).join('')
}

/** "3.00" → "3", "2.50" → "2.5". */
const trimmed = (decimal: string) => (decimal.includes('.') ? decimal.replace(/\.?0+$/, '') : decimal)

function write(doc: Doc, text: string, x: number, y: number, options: PDFKit.Mixins.TextOptions & { size?: number; bold?: boolean; color?: string } = {}): number {
  const { size = 9, bold = false, color = INK, ...rest } = options
  doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(size).fillColor(color).text(printable(text), x, y, rest)
  return doc.y
}

/** Starts a new page when `height` does not fit below `y`; answers where to go on. */
function room(doc: Doc, y: number, height: number): number {
  if (y + height <= BOTTOM) return y
  doc.addPage()
  return 50
}

/** The logo fitted into a 150×50 box at the top left; answers where the seller's lines start. An image pdfkit cannot read (its bytes only looked like one) is left out, not the PDF. */
function logo(doc: Doc, image: Buffer | undefined): number {
  if (!image) return 50
  try {
    doc.image(image, LEFT, 50, { fit: [150, 50] })
    return 108
  } catch {
    return 50
  }
}

function header(doc: Doc, model: PdfModel): number {
  const [name = '', ...details] = model.seller
  let left = write(doc, name, LEFT, logo(doc, model.logo), { size: 14, bold: true, width: 280 })
  for (const line of details) left = write(doc, line, LEFT, left + 1, { color: MUTED, width: 280 })
  let right = write(doc, model.heading, 300, 48, { size: 24, bold: true, color: model.colors.primary, width: RIGHT - 300, align: 'right' })
  right = write(doc, model.facts[0]?.[1] ?? '', 300, right + 2, { size: 11, width: RIGHT - 300, align: 'right' })
  const y = Math.max(left, right) + 14
  doc.moveTo(LEFT, y).lineTo(RIGHT, y).lineWidth(2).strokeColor(model.colors.primary).stroke()
  return y + 14
}

function parties(doc: Doc, model: PdfModel, top: number): number {
  let left = write(doc, 'BILL TO', LEFT, top, { size: 8, bold: true, color: MUTED })
  model.buyer.forEach((line, i) => {
    left = write(doc, line, LEFT, left + 2, { size: i === 0 ? 11 : 9, bold: i === 0, width: 250 })
  })
  let right = top
  for (const [label, value] of model.facts) {
    write(doc, label, 320, right, { color: MUTED, width: 95 })
    right = write(doc, value, 415, right, { width: RIGHT - 415, align: 'right' }) + 3
  }
  const y = Math.max(left, right) + 12
  return write(doc, `${model.heading === 'INVOICE' ? 'Payment status' : 'Status'}: ${model.status}`, LEFT, y, { size: 10, bold: true, color: model.colors.secondary, width: WIDTH }) + 14
}

/** A table at `x`: a header row in the template's colour, then the rows, each as tall as its tallest cell. */
function table(doc: Doc, model: PdfModel, columns: Column[], rows: string[][], x: number, top: number): number {
  const drawHeader = (y: number) => {
    const width = columns.reduce((sum, column) => sum + column.width, 0)
    doc.rect(x, y, width, 18).fill(model.colors.primary)
    let left = x
    for (const column of columns) {
      write(doc, column.title, left + 4, y + 5, { size: 8, bold: true, color: '#ffffff', width: column.width - 8, align: column.align })
      left += column.width
    }
    return y + 22
  }
  let y = drawHeader(room(doc, top, 40))
  for (const row of rows) {
    doc.font('Helvetica').fontSize(9)
    const height = Math.max(...row.map((cell, i) => doc.heightOfString(printable(cell), { width: columns[i]!.width - 8 }))) + 8
    const at = room(doc, y, height)
    if (at !== y) y = drawHeader(at)
    let left = x
    row.forEach((cell, i) => {
      write(doc, cell, left + 4, y, { width: columns[i]!.width - 8, align: columns[i]!.align })
      left += columns[i]!.width
    })
    y += height
    doc.moveTo(x, y - 4).lineTo(left, y - 4).lineWidth(0.5).strokeColor(RULE).stroke()
  }
  return y + 8
}

function totals(doc: Doc, model: PdfModel, top: number): number {
  let y = room(doc, top, 20 * model.totals.length)
  for (const total of model.totals) {
    const style = { size: total.strong ? 11 : 9, bold: total.strong === true }
    write(doc, total.label, RIGHT - 260, y, { ...style, color: total.strong ? INK : MUTED, width: 130 })
    y = write(doc, formatMoney(model.currency, total.amount), RIGHT - 130, y, { ...style, width: 130, align: 'right' }) + 5
  }
  return y + 10
}

function paragraph(doc: Doc, title: string, text: string, top: number): number {
  if (!text) return top
  const y = write(doc, title, LEFT, room(doc, top, 40), { size: 9, bold: true })
  return write(doc, text, LEFT, y + 2, { color: MUTED, width: WIDTH }) + 10
}

function draw(doc: Doc, model: PdfModel): void {
  const money = (amount: string) => formatMoney(model.currency, amount)
  let y = parties(doc, model, header(doc, model))
  const lineColumns: Column[] = [{ title: 'Item', width: 185, align: 'left' }, { title: 'Qty', width: 45, align: 'right' }, { title: 'Unit price', width: 75, align: 'right' }, { title: 'Discount', width: 60, align: 'right' }, { title: 'Tax', width: 45, align: 'right' }, { title: 'Net', width: 85.28, align: 'right' }]
  const lines = model.lines.map((line) => [line.description ? `${line.name}\n${line.description}` : line.name, trimmed(line.quantity), money(line.unitPrice), line.discount === '0.00' ? '' : money(line.discount), `${trimmed(line.taxRate)}%`, money(line.net)])
  y = table(doc, model, lineColumns, lines.length ? lines : [['No line items', '', '', '', '', '']], LEFT, y)
  y = write(doc, 'Tax breakdown', RIGHT - 300, room(doc, y + 4, 60), { size: 9, bold: true }) + 4
  const taxColumns: Column[] = [{ title: 'Tax rate', width: 80, align: 'left' }, { title: 'Taxable amount', width: 120, align: 'right' }, { title: 'Tax', width: 100, align: 'right' }]
  y = table(doc, model, taxColumns, model.taxes.map((tax) => [`${trimmed(tax.tax_rate)}%`, money(tax.taxable_amount), money(tax.tax_amount)]), RIGHT - 300, y)
  y = totals(doc, model, y + 4)
  if (model.payments.length) {
    y = write(doc, 'Payments', LEFT, room(doc, y, 60), { size: 9, bold: true }) + 4
    const paymentColumns: Column[] = [{ title: 'Date', width: 120, align: 'left' }, { title: 'Method', width: 180, align: 'left' }, { title: 'Amount', width: 120, align: 'right' }]
    y = table(doc, model, paymentColumns, model.payments.map((payment) => [payment.date, payment.method, money(payment.amount)]), LEFT, y)
  }
  y = paragraph(doc, 'Notes', model.notes, y)
  y = paragraph(doc, 'Terms', model.terms, y)
  for (const line of model.footer) y = write(doc, line, LEFT, room(doc, y + 6, 20), { size: 8, color: MUTED, width: WIDTH, align: 'center' })
}

/** The PDF's bytes. pdfkit is loaded on the first PDF: ~0.35 s of CPU that a process serving none (every test file but the PDF's) need not pay at start. */
export async function renderPdf(model: PdfModel): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit')
  const doc = new PDFDocument({ size: 'A4', margin: 50, info: { Title: printable(model.title), Author: printable(model.seller[0] ?? ''), Creator: 'CRM', CreationDate: model.createdAt, ModDate: model.createdAt } })
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    doc.on('data', (chunk: Buffer) => chunks.push(chunk))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
    draw(doc, model)
    doc.end()
  })
}
