/**
 * A row's "⋯" button: it opens JupyterLab's own menu (MenuSvg) of commands
 * with their labels, so a row keeps its name readable in a narrow sidebar
 * instead of a line of bare icons. The items are commands called with the
 * row's arguments, so whether each is shown, enabled or checked is asked of
 * the command when the menu opens.
 */
import {
  MenuSvg,
  ToolbarButtonComponent,
  ellipsesIcon
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyJSONObject } from '@lumino/coreutils';
import React, { useEffect, useRef, useState } from 'react';

/** A command with the row's arguments, or a separator. */
export type MenuEntry =
  { command: string; args?: ReadonlyJSONObject } | { separator: true };

/** A line between a menu's items. */
export const SEPARATOR: MenuEntry = { separator: true };

/**
 * A row's menu, in order: each command named is called with the row's
 * `args`; a separator, or a command with arguments of its own, stands as is.
 */
export function rowMenu(
  args: ReadonlyJSONObject,
  items: (string | MenuEntry)[]
): MenuEntry[] {
  return items.map(item =>
    typeof item === 'string' ? { command: item, args } : item
  );
}

export function MenuButton(props: {
  commands: CommandRegistry;
  /** The menu's accessible name and the button's tooltip. */
  label: string;
  entries: MenuEntry[];
}): JSX.Element {
  const anchor = useRef<HTMLSpanElement>(null);
  const menu = useRef<MenuSvg | null>(null);
  const [open, setOpen] = useState(false);
  useEffect(() => () => menu.current?.dispose(), []);

  const show = (): void => {
    const box = anchor.current?.getBoundingClientRect();
    if (!box) {
      return;
    }
    if (!menu.current) {
      const created = new MenuSvg({ commands: props.commands });
      created.addClass('jp-GpuEnv-rowMenu');
      created.aboutToClose.connect(() => setOpen(false));
      menu.current = created;
    }
    // Built at each opening: the entries follow the row's current state.
    const current = menu.current;
    current.clearItems();
    current.node.setAttribute('aria-label', props.label);
    for (const entry of props.entries) {
      current.addItem(
        'separator' in entry
          ? { type: 'separator' }
          : { command: entry.command, args: entry.args }
      );
    }
    setOpen(true);
    current.open(box.left, box.bottom);
  };

  return (
    <span ref={anchor} className="jp-GpuEnv-menuAnchor">
      <ToolbarButtonComponent
        icon={ellipsesIcon}
        tooltip={props.label}
        aria-haspopup="menu"
        aria-expanded={open}
        dataset={{ action: 'menu' }}
        // Opened on mouse down, like JupyterLab's menus, and without taking
        // the focus back from the menu, whose arrow keys then work at once.
        noFocusOnClick={true}
        onClick={show}
      />
    </span>
  );
}
