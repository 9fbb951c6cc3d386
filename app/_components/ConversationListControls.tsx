'use client';
// The conversations list's quick filters and order: chips a thumb can hit (Pinned, Muted, Archived,
// Groups, Contacts) instead of selects, and an order picked by name (recent activity, recently
// opened, name) rather than by column headers a phone (or a wide screen's list beside a
// conversation) does not show.
import type { SortingState } from '@tanstack/react-table';
import type { ConversationFilters } from '@/lib/view/conversations';

type Chip = { label: string; on(f: ConversationFilters): boolean; toggle(f: ConversationFilters): ConversationFilters };

const CHIPS: Chip[] = [
  { label: 'Pinned', on: (f) => f.pinned === 'yes', toggle: (f) => ({ ...f, pinned: f.pinned === 'yes' ? 'any' : 'yes' }) },
  { label: 'Muted', on: (f) => f.muted === 'yes', toggle: (f) => ({ ...f, muted: f.muted === 'yes' ? 'any' : 'yes' }) },
  // Archived ones are hidden until asked for; the chip shows them (only them).
  { label: 'Archived', on: (f) => f.archived === 'yes', toggle: (f) => ({ ...f, archived: f.archived === 'yes' ? 'no' : 'yes' }) },
  // Groups and Contacts exclude each other: one kind, or both.
  { label: 'Groups', on: (f) => f.kind === 'group', toggle: (f) => ({ ...f, kind: f.kind === 'group' ? 'any' : 'group' }) },
  { label: 'Contacts', on: (f) => f.kind === 'contact', toggle: (f) => ({ ...f, kind: f.kind === 'contact' ? 'any' : 'contact' }) },
];

export function FilterChips({ filters, onChange }: { filters: ConversationFilters; onChange(next: ConversationFilters): void }) {
  return (
    <div className="chips" role="group" aria-label="Show only">
      {CHIPS.map((chip) => {
        const on = chip.on(filters);
        return (
          // Named by its label alone ("Pinned"); its state is aria-pressed. The check mark is for the eye.
          <button key={chip.label} type="button" className="chip" aria-pressed={on} onClick={() => onChange(chip.toggle(filters))}>
            {on && <span aria-hidden="true">✓</span>}
            {chip.label}
          </button>
        );
      })}
    </div>
  );
}

/** The named orders, as the table's sorting state (the column headers on a wide screen set the same state). */
const ORDERS = {
  // The default order: pinned first, then the most recently active.
  activity: { label: 'Recent activity', sorting: [] },
  opened: { label: 'Recently opened', sorting: [{ id: 'last_opened', desc: true }] },
  name: { label: 'Name', sorting: [{ id: 'title', desc: false }] },
} satisfies Record<string, { label: string; sorting: SortingState }>;
type Order = keyof typeof ORDERS;

function orderOf(sorting: SortingState): Order | 'column' {
  const key = JSON.stringify(sorting);
  return (Object.keys(ORDERS) as Order[]).find((o) => JSON.stringify(ORDERS[o].sorting) === key) ?? 'column';
}

export function SortSelect({ sorting, onChange }: { sorting: SortingState; onChange(next: SortingState): void }) {
  const order = orderOf(sorting);
  return (
    <span className="filter sort-select">
      <label htmlFor="conversation-order" className="narrow-hidden">
        Sort by
      </label>
      <select id="conversation-order" value={order} onChange={(e) => onChange(ORDERS[e.target.value as Order].sorting)}>
        {(Object.keys(ORDERS) as Order[]).map((o) => (
          <option key={o} value={o}>
            {ORDERS[o].label}
          </option>
        ))}
        {/* A column header's order (wide screens): named as such, not pickable here. */}
        {order === 'column' && (
          <option value="column" disabled>
            By column
          </option>
        )}
      </select>
    </span>
  );
}
