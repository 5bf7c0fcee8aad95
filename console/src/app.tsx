// The shell: sign-in gate, navigation, keyboard shortcuts, and the routes.
import { useEffect, useState } from 'react';
import { NavLink, Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { clearToken, getToken, whenUnauthorized } from './api';
import { useServiceInfo } from './service-info';
import { SignIn } from './pages/sign-in';
import { AccountsPage } from './pages/accounts';
import { AccountPage } from './pages/account';
import { CouriersPage } from './pages/couriers';
import { JobsPage } from './pages/jobs';
import { ShortcutsHelp, useShortcuts } from './shortcuts';
import { usePendingApprovals } from './pages/approvals';

export function App() {
  const [signedIn, setSignedIn] = useState(() => !!getToken());
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [help, setHelp] = useState(false);
  useShortcuts(navigate, () => setHelp(true));
  useEffect(
    () =>
      whenUnauthorized(() => {
        clearToken();
        queries.clear();
        setSignedIn(false);
      }),
    [queries],
  );
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const signOut = () => {
    clearToken();
    queries.clear();
    setSignedIn(false);
  };
  return (
    <div className="shell">
      <Sidebar onSignOut={signOut} onHelp={() => setHelp(true)} />
      <main id="main">
        <Routes>
          <Route path="/" element={<Navigate to="/accounts" replace />} />
          <Route path="/accounts" element={<AccountsPage />} />
          <Route path="/accounts/:accountId/*" element={<AccountPage />} />
          <Route path="/couriers" element={<CouriersPage />} />
          <Route path="/jobs" element={<JobsPage />} />
          <Route
            path="*"
            element={
              <p className="empty">
                No such page. <NavLink to="/accounts">Accounts</NavLink>
              </p>
            }
          />
        </Routes>
      </main>
      <ShortcutsHelp open={help} onClose={() => setHelp(false)} />
    </div>
  );
}

// On a narrow screen (styles.css, "Narrow screens") the sidebar folds into a
// top bar: the brand and a Menu button that opens the links below it; picking
// a page closes it again.
function Sidebar({ onSignOut, onHelp }: { onSignOut: () => void; onHelp: () => void }) {
  const info = useServiceInfo();
  const [open, setOpen] = useState(false);
  const { pathname } = useLocation();
  useEffect(() => setOpen(false), [pathname]);
  // Inside an account: its approvals inbox, with how many wait for a decision (EXTENSIONS 7).
  const accountId = /^\/accounts\/([0-9a-f-]{36})/.exec(pathname)?.[1];
  const pending = usePendingApprovals(accountId).data?.length ?? 0;
  return (
    <nav className={open ? 'sidebar open' : 'sidebar'} aria-label="Main">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <div className="bar">
        <div className="brand">
          Merx <span>operator</span>
        </div>
        <button type="button" className="menu-toggle secondary" aria-expanded={open} aria-controls="main-menu" onClick={() => setOpen(!open)}>
          {open ? 'Close' : 'Menu'}
        </button>
      </div>
      <div className="menu" id="main-menu">
        <NavLink to="/accounts">Accounts</NavLink>
        {accountId && (
          <NavLink to={`/accounts/${accountId}/approvals`} className="sub" aria-label={`Approvals, ${pending} pending`}>
            Approvals{' '}
            <span className={pending ? 'count' : 'count zero'} data-testid="pending-approvals">
              {pending}
            </span>
          </NavLink>
        )}
        <NavLink to="/couriers">Courier simulator</NavLink>
        <NavLink to="/jobs">Jobs</NavLink>
        <hr />
        <a href="/docs">API reference ↗</a>
        <a href="/admin/docs">Operator API ↗</a>
        <div className="grow" />
        {info.data && (
          <dl className="facts">
            <dt>Database</dt>
            <dd>{info.data.database === 'pglite' ? 'PGlite (embedded)' : 'PostgreSQL'}</dd>
            <dt>Couriers</dt>
            <dd>{info.data.courier_mode}</dd>
            <dt>Build</dt>
            <dd>{info.data.deploy_sha}</dd>
          </dl>
        )}
        <button type="button" className="link" onClick={onHelp}>
          Keyboard shortcuts <kbd>?</kbd>
        </button>
        <button type="button" className="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </nav>
  );
}
