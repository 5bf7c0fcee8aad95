// Keyboard: "/" focuses the page's search or first filter, "g a" / "g c" / "g j"
// go to accounts, couriers and jobs, "?" lists the shortcuts. Tables take
// ↑/↓ (or j/k) and Enter; dialogs close with Escape. j or k with no row
// focused starts on the page's first list (components/table.tsx moves on from
// there), so a list answers to the keyboard as soon as it is shown.
import { useEffect } from 'react';
import type { NavigateFunction } from 'react-router';
import { Dialog } from './components/dialog';

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

const inRow = (target: EventTarget | null) => target instanceof Element && !!target.closest('tbody tr[tabindex]');

export function useShortcuts(navigate: NavigateFunction, showHelp: () => void) {
  useEffect(() => {
    let leader = false;
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      if (leader) {
        leader = false;
        const to = { a: '/accounts', c: '/couriers', j: '/jobs' }[event.key];
        if (to) void navigate(to);
        return;
      }
      if (event.key === 'g') leader = true;
      else if (
        (event.key === 'j' || event.key === 'k') &&
        !event.defaultPrevented &&
        !inRow(event.target) &&
        !document.querySelector('dialog[open]')
      ) {
        const first = document.querySelector<HTMLElement>('main tbody tr[tabindex]');
        if (first) {
          event.preventDefault();
          first.focus();
        }
      } else if (event.key === '?') showHelp();
      else if (event.key === '/') {
        const search = document.querySelector<HTMLElement>('[data-search]');
        if (search) {
          event.preventDefault();
          search.focus();
        }
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [navigate, showHelp]);
}

export function ShortcutsHelp({ open, onClose }: { open: boolean; onClose: () => void }) {
  const rows: Array<[string, string]> = [
    ['/', 'Search or filter on this page'],
    ['g a', 'Accounts'],
    ['g c', 'Courier simulator'],
    ['g j', 'Jobs'],
    ['↑ ↓ or j k', 'Move between rows of a list (j or k starts on the first row)'],
    ['Enter', 'Open the row'],
    ['Esc', 'Close a dialog'],
    ['?', 'This list'],
  ];
  return (
    <Dialog title="Keyboard shortcuts" open={open} onClose={onClose}>
      <table>
        <tbody>
          {rows.map(([keys, what]) => (
            <tr key={keys}>
              <td>
                <kbd>{keys}</kbd>
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
