import type { CreatedApiKey } from '@assay/client/browser';
import { useState } from 'react';

/** The full key, once: held only by the page's state, so it is gone when the page is left or dismissed. */
export function NewKeyNotice({ created, onDismiss }: { created: CreatedApiKey; onDismiss(): void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | undefined>();
  const copy = () =>
    navigator.clipboard.writeText(created.key).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  return (
    <div className="notice new-key" role="status">
      <p>
        <strong>Copy the key for “{created.description}” now: it is not shown again.</strong>
      </p>
      <label>
        <span>Your new API key</span>
        <input className="code" readOnly value={created.key} onFocus={(e) => e.target.select()} />
      </label>
      <div className="actions">
        <button type="button" className="primary" onClick={() => void copy()}>
          Copy key
        </button>
        <button type="button" onClick={onDismiss}>
          I have saved it
        </button>
        <span aria-live="polite">
          {copied === 'yes' && 'Copied.'}
          {copied === 'failed' && 'The browser refused the clipboard: select the key and copy it.'}
        </span>
      </div>
    </div>
  );
}
