// Any JSON as a collapsible field tree: each node a label and either a value or children. Built
// lazily per level by the viewer (children of a node are made when it is opened), so a deep or
// huge document costs nothing until looked at.

export interface TreeNode {
  label: string;
  /** A scalar, as text; undefined for an object or array. */
  value?: string;
  /** For an object or array: how many children ("3 fields", "12 items"). */
  size?: string;
  children?: () => TreeNode[];
}

export const MAX_CHILDREN = 1000;

export function treeOf(label: string, value: unknown): TreeNode {
  if (value === null) return { label, value: 'null' };
  if (Array.isArray(value)) {
    return {
      label,
      size: `${value.length} ${value.length === 1 ? 'item' : 'items'}`,
      children: () => value.slice(0, MAX_CHILDREN).map((v, i) => treeOf(`${i + 1}`, v)),
    };
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return {
      label,
      size: `${entries.length} ${entries.length === 1 ? 'field' : 'fields'}`,
      children: () => entries.slice(0, MAX_CHILDREN).map(([k, v]) => treeOf(k, v)),
    };
  }
  return { label, value: String(value) };
}
