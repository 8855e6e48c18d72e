import {
  fromResponse,
  type ApiClient,
  type AssetData,
  type AssetLinks,
  type PresignedRequest,
  type UploadTarget,
} from '@assay/client/browser';

/** One PUT straight to storage: a whole file, or one part of a multipart upload. */
interface Piece {
  target: PresignedRequest;
  offset: number;
  size: number;
}

/**
 * A file's name as a component name (letters, digits, `._-`, never a leading dot): a browser file can be
 * called anything, and the service refuses names that could read as paths.
 */
export function componentName(fileName: string): string {
  const cleaned = fileName.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[.-]+/, '');
  return (cleaned || 'file').slice(0, 255);
}

function piecesOf(target: UploadTarget, size: number): Piece[] {
  if (!('multipart' in target)) return [{ target, offset: 0, size }];
  return target.parts.map((p) => ({
    target: p,
    offset: (p.part_number - 1) * target.part_size,
    size: p.size,
  }));
}

/**
 * Sends one piece with XMLHttpRequest, for its upload progress events (fetch has none). The browser sets
 * Content-Length from the Blob itself and refuses a script's own, so that one presigned header is left out.
 */
function put(piece: Piece, body: Blob, onBytes: (loaded: number) => void) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(piece.target.method, piece.target.url);
    for (const [name, value] of Object.entries(piece.target.headers))
      if (name.toLowerCase() !== 'content-length') xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => onBytes(e.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status <= 299) {
        onBytes(piece.size);
        resolve();
      } else reject(fromResponse(xhr.status, xhr.responseText));
    };
    xhr.onerror = () => reject(new Error('the storage could not be reached (network error or CORS refusal)'));
    xhr.send(body);
  });
}

/**
 * Uploads one file as a one-component asset: declares it (`presign: true`), PUTs the bytes straight to
 * storage on the presigned URLs (one after another, so progress reads in order), then finalizes it.
 * `onProgress` gets the bytes sent so far out of the file's size.
 */
export async function uploadFile(
  client: ApiClient,
  file: File,
  links: Pick<AssetLinks, 'kind' | 'experimentId' | 'organizationId'>,
  onProgress: (sent: number, total: number) => void,
): Promise<AssetData> {
  const name = componentName(file.name);
  const created = await client.assets.createPresigned({
    ...links,
    name: file.name,
    components: [{ name, size: file.size, contentType: file.type || 'application/octet-stream' }],
  });
  const target = created.uploads[name];
  if (!target) throw new Error(`the service answered no upload target for ${name}`);
  let done = 0;
  onProgress(0, file.size);
  for (const piece of piecesOf(target, file.size)) {
    const blob = file.slice(piece.offset, piece.offset + piece.size);
    await put(piece, blob, (loaded) => onProgress(done + Math.min(loaded, piece.size), file.size));
    done += piece.size;
  }
  return client.assets.finalize(created.id);
}
