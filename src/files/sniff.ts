import { open } from 'node:fs/promises'
import { extname } from 'node:path'

/**
 * The content type of a stored file, read from its first bytes rather than taken from the client:
 * a type a client names is what it claims, and a download answered under it (say `text/html` on
 * an uploaded page) would make the server vouch for the claim. Formats are told by their magic
 * numbers; the zip-based office formats, which share the zip signature, by their extension among
 * those; text with no NUL byte that decodes as UTF-8 is `text/plain` (`text/csv` for .csv);
 * anything else is `application/octet-stream`.
 */

const SIGNATURES: readonly { bytes: readonly (number | null)[]; type: string }[] = [
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], type: 'application/pdf' },
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], type: 'image/png' },
  { bytes: [0xff, 0xd8, 0xff], type: 'image/jpeg' },
  { bytes: [0x47, 0x49, 0x46, 0x38], type: 'image/gif' },
  { bytes: [0x52, 0x49, 0x46, 0x46, null, null, null, null, 0x57, 0x45, 0x42, 0x50], type: 'image/webp' },
  { bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], type: 'application/x-ole-storage' },
  { bytes: [0x1f, 0x8b], type: 'application/gzip' },
]

const ZIP = [0x50, 0x4b, 0x03, 0x04]
const ZIP_FORMATS: Readonly<Record<string, string>> = {
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
}

const startsWith = (head: Buffer, bytes: readonly (number | null)[]) => head.length >= bytes.length && bytes.every((byte, i) => byte === null || head[i] === byte)

const isUtf8Text = (head: Buffer) => {
  if (head.includes(0)) return false
  // A multi-byte character cut at the end of the sample is no reason to call the file binary.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head)
  return !text.slice(0, -1).includes('\uFFFD')
}

/** The content type of these first bytes of a file named `fileName` (the name only picks among zip formats and text kinds). */
export function sniffContentType(head: Buffer, fileName: string): string {
  const ext = extname(fileName).toLowerCase()
  const known = SIGNATURES.find((signature) => startsWith(head, signature.bytes))
  if (known) return known.type
  if (startsWith(head, ZIP)) return ZIP_FORMATS[ext] ?? 'application/zip'
  if (head.length > 0 && isUtf8Text(head)) return ext === '.csv' ? 'text/csv' : 'text/plain'
  return 'application/octet-stream'
}

/** Sniffs a file on disk from its first 512 bytes. */
export async function sniffFile(path: string, fileName: string): Promise<string> {
  const file = await open(path, 'r')
  try {
    const head = Buffer.alloc(512)
    const { bytesRead } = await file.read(head, 0, head.length, 0)
    return sniffContentType(head.subarray(0, bytesRead), fileName)
  } finally {
    await file.close()
  }
}
