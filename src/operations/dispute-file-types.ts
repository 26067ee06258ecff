/**
 * What an uploaded evidence file is, read from its bytes: the client's content type and file
 * name are never trusted. Only types a browser shows inertly are kept (images, PDF, plain text);
 * the stored type is the one served back, with nosniff and as an attachment.
 */

export const MAX_EVIDENCE_FILE_BYTES = 5 * 1024 * 1024;

export interface DetectedType {
  contentType: string;
  /** The extensions a file of this type may keep; the first is added when its name has none. */
  extensions: readonly string[];
}

const startsWith = (data: Uint8Array, bytes: readonly number[], at = 0) =>
  data.length >= at + bytes.length && bytes.every((b, i) => data[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

const MAGIC: readonly { test: (d: Uint8Array) => boolean; type: DetectedType }[] = [
  {
    test: (d) => startsWith(d, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    type: { contentType: 'image/png', extensions: ['.png'] },
  },
  {
    test: (d) => startsWith(d, [0xff, 0xd8, 0xff]),
    type: { contentType: 'image/jpeg', extensions: ['.jpg', '.jpeg'] },
  },
  {
    test: (d) => startsWith(d, ascii('GIF87a')) || startsWith(d, ascii('GIF89a')),
    type: { contentType: 'image/gif', extensions: ['.gif'] },
  },
  {
    test: (d) => startsWith(d, ascii('RIFF')) && startsWith(d, ascii('WEBP'), 8),
    type: { contentType: 'image/webp', extensions: ['.webp'] },
  },
  {
    test: (d) => startsWith(d, ascii('%PDF-')),
    type: { contentType: 'application/pdf', extensions: ['.pdf'] },
  },
];

const TEXT: DetectedType = { contentType: 'text/plain; charset=utf-8', extensions: ['.txt'] };

// C0 controls other than tab, line feed, form feed and carriage return; DEL; C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them.
const BINARY_CONTROLS = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f]/;

function isPlainText(data: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return false;
  }
  return !BINARY_CONTROLS.test(text);
}

/** The file's type from its first bytes (or, for text, all of them), or undefined if not allowed. */
export function detectFileType(data: Uint8Array): DetectedType | undefined {
  for (const { test, type } of MAGIC) if (test(data)) return type;
  return isPlainText(data) ? TEXT : undefined;
}

/**
 * A file name safe in a Content-Disposition header and on any file system: the last path
 * segment, ASCII letters, digits, dot, dash, underscore and space only, no leading dot, at most
 * 100 characters, ending in an extension of its detected type (evil.html sent as text is
 * evil.html.txt, so no program opens it as a web page).
 */
export function safeFileName(original: string, type: DetectedType): string {
  const base = original.split(/[/\\]/).pop() ?? '';
  let name = base
    // Accents come off (é → e) rather than becoming '_'.
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._ -]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[.\s_-]+/, '')
    .trim();
  if (name === '') name = 'evidence';
  const kept = type.extensions.find((ext) => name.toLowerCase().endsWith(ext));
  const extension = kept ?? type.extensions[0] ?? '';
  const stem = kept ? name.slice(0, name.length - kept.length) : name;
  name = `${stem.slice(0, 100 - extension.length).trimEnd() || 'evidence'}${kept ? name.slice(-kept.length) : extension}`;
  return name;
}
