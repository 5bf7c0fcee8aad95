// A filter's choice: a compact labelled <select> whose first option, "Any" by
// default (`all`), leaves the filter unset; null leaves that option out.
export function Select({
  label,
  value,
  options,
  onChange,
  all = 'Any',
}: {
  label: string;
  value: string;
  options: readonly string[];
  onChange: (v: string) => void;
  all?: string | null;
}) {
  return (
    <label className="compact">
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        {all !== null && <option value="">{all}</option>}
        {options.map((o) => (
          <option key={o} value={o}>
            {o.replace(/_/g, ' ')}
          </option>
        ))}
      </select>
    </label>
  );
}
