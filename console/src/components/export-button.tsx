// EXTENSIONS 8: export what a list page shows (its current filters) as JSON
// Lines or CSV, every record rather than one page, through the export route.
import { useState } from 'react';
import { downloadOperation } from '../api';
import type { OperationName } from '../api-types';
import { Select } from './select';
import { ErrorNote } from './ui';

export function ExportButton({
  accountId,
  operation,
  filters,
  name,
}: {
  accountId: string;
  operation: OperationName;
  filters: Record<string, unknown>;
  name: string;
}) {
  const [format, setFormat] = useState('jsonl');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await downloadOperation(accountId, operation, { ...filters, format }, `${name}.${format}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="row" aria-label="Export">
      <Select label="Export as" value={format} options={['jsonl', 'csv']} onChange={setFormat} all={null} />
      <button type="button" onClick={() => void run()} disabled={busy}>
        {busy ? 'Exporting…' : 'Export'}
      </button>
      <ErrorNote error={error} />
    </span>
  );
}
