import type { FsVersion } from '../seam/index.js';

/*
 * A tool value that carries an image (what the read tool returns for a picture). The adapters
 * (MCP, the AI SDK, each API's result shape) recognise it to send the model the image itself.
 */

/** The image types the read tool recognises by content. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** What read returns for a PNG, JPEG, GIF or WebP file (recognised by content, not name). */
export interface ReadImageValue {
  readonly type: 'image';
  readonly path: string;
  /** Version of exactly the bytes returned. */
  readonly version: FsVersion;
  readonly mediaType: ImageMediaType;
  /** The file's bytes, base64. */
  readonly data: string;
  /** Bytes in the file. */
  readonly size: number;
  /** Pixels, from the header. */
  readonly width: number;
  readonly height: number;
  /** Never set: an image has no lines, so `value.totalLines` reads on either kind (undefined here). */
  readonly totalLines?: undefined;
}

export const isImageValue = (value: unknown): value is ReadImageValue =>
  typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'image' && typeof (value as { data?: unknown }).data === 'string';
