import { useState, type FormEvent } from 'react';
import { admin, setToken } from '../api';
import { ErrorNote } from '../components/ui';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setValue] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await admin('GET', '/admin/api/info', { token: token.trim() });
      setToken(token.trim());
      onSignedIn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="sign-in">
      <form onSubmit={(event) => void submit(event)} aria-label="Sign in">
        <h1>
          Merx <span>operator console</span>
        </h1>
        <p className="muted">
          Sign in with the operator token: <code>npm start</code> prints it (or set <code>ADMIN_TOKEN</code>). It stays in this tab only.
        </p>
        <label className="field">
          <span>Operator token</span>
          <input
            type="password"
            value={token}
            onChange={(e) => setValue(e.target.value)}
            autoFocus
            autoComplete="current-password"
            required
            placeholder="merx_admin_…"
          />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy || !token.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
