// Recognising the four image formats models accept, by their magic bytes (never the file name),
// and reading their pixel size from the header. No decoding: only the few header bytes each
// format puts the size in.

import type { ImageMediaType } from '../harness/image.js';

export type { ImageMediaType };

export type ImageSniff =
  | { readonly mediaType: ImageMediaType; readonly width: number; readonly height: number }
  /** The magic bytes say this format, but the size could not be read (truncated or damaged header). */
  | { readonly mediaType: ImageMediaType; readonly problem: string };

const ascii = (bytes: Uint8Array, at: number, text: string) => {
  if (bytes.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
};

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The image format the bytes start with, if any. */
export function imageType(bytes: Uint8Array): ImageMediaType | undefined {
  if (PNG_MAGIC.every((b, i) => bytes[i] === b)) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'image/gif';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  return undefined;
}

/** Whether decoded text starts like a GIF or WebP, whose headers can be valid UTF-8. */
export function looksLikeTextImage(firstChunk: string): boolean {
  return firstChunk.startsWith('GIF87a') || firstChunk.startsWith('GIF89a') || /^RIFF[\s\S]{4}WEBP/.test(firstChunk);
}

/** Format and pixel size, or undefined when the bytes are not one of the four formats. */
export function sniffImage(bytes: Uint8Array): ImageSniff | undefined {
  const mediaType = imageType(bytes);
  if (mediaType === undefined) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = dimensions(mediaType, bytes, view);
  if (size === undefined || size.width < 1 || size.height < 1) {
    return { mediaType, problem: 'its header is truncated or damaged' };
  }
  return { mediaType, ...size };
}

type Size = { width: number; height: number } | undefined;

function dimensions(type: ImageMediaType, bytes: Uint8Array, view: DataView): Size {
  switch (type) {
    case 'image/png':
      // The IHDR chunk comes first: length, "IHDR", width, height (big-endian).
      if (bytes.length < 24 || !ascii(bytes, 12, 'IHDR')) return undefined;
      return { width: view.getUint32(16), height: view.getUint32(20) };
    case 'image/gif':
      if (bytes.length < 10) return undefined;
      return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
    case 'image/webp':
      return webpSize(bytes, view);
    case 'image/jpeg':
      return jpegSize(bytes, view);
  }
}

function webpSize(bytes: Uint8Array, view: DataView): Size {
  if (ascii(bytes, 12, 'VP8 ')) {
    // Lossy: a key frame's start code, then 14-bit width and height.
    if (bytes.length < 30 || bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined;
    return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  }
  if (ascii(bytes, 12, 'VP8L')) {
    // Lossless: a signature byte, then width-1 and height-1 in 14 bits each.
    if (bytes.length < 25 || bytes[20] !== 0x2f) return undefined;
    const b = (i: number) => bytes[21 + i]!;
    return { width: 1 + (((b(1) & 0x3f) << 8) | b(0)), height: 1 + (((b(3) & 0x0f) << 10) | (b(2) << 2) | ((b(1) & 0xc0) >> 6)) };
  }
  if (ascii(bytes, 12, 'VP8X')) {
    // Extended: canvas width-1 and height-1, 24 bits each.
    if (bytes.length < 30) return undefined;
    const u24 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
    return { width: 1 + u24(24), height: 1 + u24(27) };
  }
  return undefined;
}

function jpegSize(bytes: Uint8Array, view: DataView): Size {
  // Walk the marker segments to the first start-of-frame, which holds height then width.
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    const length = view.getUint16(at + 2);
    if (length < 2) return undefined;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (at + 9 > bytes.length) return undefined;
      return { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image or scan data before any frame header
    at += 2 + length;
  }
  return undefined;
}
