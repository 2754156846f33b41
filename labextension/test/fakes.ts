/**
 * What the components ask of JupyterLab and of the models, faked for the
 * component tests (`*.spec.tsx`, jsdom: Lumino's commands need a DOM): a
 * command registry that records what it was asked, a model's memory of its
 * expanded rows.
 */
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

/** A command registry whose commands only record the arguments they get. */
export function recordingCommands(ids: string[]): {
  commands: CommandRegistry;
  calls: [string, ReadonlyPartialJSONObject][];
} {
  const commands = new CommandRegistry();
  const calls: [string, ReadonlyPartialJSONObject][] = [];
  for (const id of ids) {
    commands.addCommand(id, {
      label: id,
      execute: args => {
        calls.push([id, args]);
      }
    });
  }
  return { commands, calls };
}

/**
 * A model's expanded rows as the rows ask them (a sweep's, a schedule's):
 * kept like the real model's, with `setExpanded` a mock to see its calls.
 */
export function expansion(): {
  isExpanded: (id: string) => boolean;
  setExpanded: jest.Mock<void, [string, boolean, string?]>;
} {
  const expanded = new Set<string>();
  const setExpanded = jest.fn((id: string, on: boolean, _where?: string) => {
    if (on) {
      expanded.add(id);
    } else {
      expanded.delete(id);
    }
  });
  return { isExpanded: id => expanded.has(id), setExpanded };
}
