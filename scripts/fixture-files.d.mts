// Types for fixture-files.mjs (plain JavaScript, so that scripts run it with plain node).
export function pdfOf(content: string, width?: number, height?: number): Buffer;
export function textPdf(text: string): Buffer;
export function whiteRows(width: number, height: number): Buffer;
export function pngOf(width: number, height: number, rows: Buffer): Buffer;
