/** A multipart/form-data body as a browser would send it: text fields (a list repeats the key) and files. */
export async function multipartBody(fields: Record<string, string | string[] | { name: string; type: string; content: string | Uint8Array<ArrayBuffer> }>): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData()
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === 'string') form.append(key, value)
    else if (Array.isArray(value)) for (const item of value) form.append(key, item)
    else form.append(key, new Blob([value.content], { type: value.type }), value.name)
  }
  const encoded = new Response(form)
  return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! }
}

/** A 1×1 PNG: an image as its bytes say, whatever name and type a client sends it under. */
export const PNG_1X1 = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'))
