import { ASSET_KINDS } from '@assay/contract/enums';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type DragEvent } from 'react';
import { uploadFile } from '../browser-upload.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient, useSession } from '../session.tsx';
import { describeError } from './status.tsx';

interface FileUpload {
  key: string;
  name: string;
  sent: number;
  total: number;
  state: 'uploading' | 'ready' | 'failed';
  message?: string;
}

/**
 * Drop files (or choose them) to upload each as an asset of the chosen kind, linked to `experimentId` when
 * given, else in the current scope; every file gets its own progress bar.
 */
export function AssetUpload({ experimentId }: { experimentId: string | undefined }) {
  const client = useClient();
  const { scope } = useSession();
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<string>('document');
  const [over, setOver] = useState(false);
  const [uploads, setUploads] = useState<FileUpload[]>([]);
  const inputId = useId();

  const update = (key: string, change: Partial<FileUpload>) =>
    setUploads((all) => all.map((u) => (u.key === key ? { ...u, ...change } : u)));

  const start = (files: Iterable<File>) => {
    for (const file of files) {
      const key = crypto.randomUUID();
      setUploads((all) => [{ key, name: file.name, sent: 0, total: file.size, state: 'uploading' }, ...all]);
      uploadFile(client, file, { kind, experimentId, organizationId: scope }, (sent, total) =>
        update(key, { sent, total }),
      ).then(
        () => {
          update(key, { state: 'ready' });
          void queryClient.invalidateQueries({ queryKey: queryKeys.assets() });
        },
        (error: unknown) => {
          const { code, message } = describeError(error);
          update(key, { state: 'failed', message: `${code}: ${message}` });
        },
      );
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    start(e.dataTransfer.files);
  };

  return (
    <section className="card upload" aria-labelledby={`${inputId}-title`}>
      <h2 id={`${inputId}-title`}>Upload</h2>
      <div className="filters">
        <label>
          <span>Kind of the new assets</span>
          <select value={kind} onChange={(e) => setKind(e.target.value)}>
            {ASSET_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div
        className={over ? 'drop-zone over' : 'drop-zone'}
        data-testid="drop-zone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p>
          Drop files here, or{' '}
          <label htmlFor={inputId} className="file-label">
            choose files
          </label>
          <input
            id={inputId}
            type="file"
            multiple
            className="visually-hidden"
            onChange={(e) => {
              if (e.target.files) start(e.target.files);
              e.target.value = ''; // the same file chosen again is a new upload
            }}
          />
          .{' '}
          {experimentId ? 'They are linked to the chosen experiment.' : 'They are kept in the current scope.'}
        </p>
      </div>
      {uploads.length > 0 && (
        <ul className="upload-list" aria-label="Uploads">
          {uploads.map((u) => (
            <UploadRow key={u.key} upload={u} />
          ))}
        </ul>
      )}
    </section>
  );
}

function UploadRow({ upload: u }: { upload: FileUpload }) {
  const percent = u.total === 0 ? (u.state === 'uploading' ? 0 : 100) : Math.floor((u.sent / u.total) * 100);
  return (
    <li data-upload={u.name} data-state={u.state}>
      <span className="upload-name">{u.name}</span>
      <progress max={100} value={percent} aria-label={`Upload of ${u.name}`} />
      <span className="upload-percent">{percent} %</span>
      <span
        className={`badge state-${u.state === 'failed' ? 'failed' : u.state === 'ready' ? 'ready' : 'pending'}`}
      >
        {u.state}
      </span>
      {u.message && (
        <span className="failure" role="alert">
          {u.message}
        </span>
      )}
    </li>
  );
}
