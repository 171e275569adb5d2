/** A multipart/form-data body as an HTTP client sends it, with the part's Content-Type exactly as given. */
/** `filename: null` sends the part without one, as RFC 7578 allows. */
export const multipartBody = async (parts: { name: string; bytes: Buffer; type?: string; filename?: string | null }[]) => {
  const boundary = `----svc-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename === null ? "" : `; filename="${part.filename ?? "clip"}"`;
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${filename}\r\n`;
    if (part.type) head += `Content-Type: ${part.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), part.bytes, Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
};
