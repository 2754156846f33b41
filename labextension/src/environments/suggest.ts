/**
 * As-you-type suggestions under a package field: what exists, asked of the
 * server (`GET packages`) for the name being typed. Conda: names holding it,
 * with their newest version, a click puts the name in the field; PyPI: the
 * versions of the package of exactly that name, or that there is none.
 */
import { h } from '../components/form';
import type { IPackageSearch, PackageKind } from '../api/types';

/** How long typing must pause before the server is asked (ms). */
export const SUGGEST_DELAY = 300;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*/;

export type SearchFn = (
  query: string,
  kind: PackageKind
) => Promise<IPackageSearch>;

/** The package name being typed: the start of the field's last token. */
export function typedName(text: string): string | null {
  if (/[\s,]$/.test(text)) {
    return null;
  }
  const last = text.split(/[\s,]+/).pop() ?? '';
  const name = NAME.exec(last)?.[0] ?? '';
  return name.length >= 2 && name === last.split(/[=<>!~[]/)[0] ? name : null;
}

export class Suggestions {
  constructor(
    private readonly _input: HTMLInputElement,
    private readonly _kind: PackageKind,
    private readonly _search: SearchFn
  ) {
    this.node = h('div', {
      class: 'jp-GpuEnv-suggestions',
      'data-testid': `gpu-env-suggest-${_kind}`,
      'aria-live': 'polite'
    });
    _input.addEventListener('input', () => this._schedule());
  }

  readonly node: HTMLDivElement;

  private _schedule(): void {
    window.clearTimeout(this._timer);
    const name = typedName(this._input.value);
    if (name === null) {
      this.node.replaceChildren();
      return;
    }
    this._timer = window.setTimeout(() => void this._ask(name), SUGGEST_DELAY);
  }

  private async _ask(name: string): Promise<void> {
    const asked = ++this._asked;
    let found: IPackageSearch;
    try {
      found = await this._search(name, this._kind);
    } catch (reason) {
      if (asked === this._asked) {
        const why = reason instanceof Error ? reason.message : String(reason);
        this.node.replaceChildren(
          h(
            'span',
            { class: 'jp-GpuEnv-fieldHint' },
            `Search unavailable: ${why}`
          )
        );
      }
      return;
    }
    if (asked !== this._asked) {
      return; // typing went on: a newer answer is coming
    }
    this._show(name, found);
  }

  private _show(name: string, found: IPackageSearch): void {
    if (found.packages.length === 0) {
      const where =
        this._kind === 'conda'
          ? "in the server's channels"
          : 'on the package index';
      this.node.replaceChildren(
        h(
          'span',
          { class: 'jp-GpuEnv-fieldHint' },
          `No package named like '${name}' ${where}.`
        )
      );
      return;
    }
    if (this._kind === 'pypi') {
      const [pkg] = found.packages;
      this.node.replaceChildren(
        h(
          'span',
          { class: 'jp-GpuEnv-fieldHint' },
          `${pkg.name} on the index: ${pkg.versions.slice(0, 5).join(', ') || 'no files'}`
        )
      );
      return;
    }
    const chips = found.packages.slice(0, 8).map(pkg => {
      const chip = h(
        'button',
        {
          type: 'button',
          class: 'jp-GpuEnv-suggestion',
          title: pkg.versions.length
            ? `Versions: ${pkg.versions.join(', ')}`
            : pkg.name
        },
        pkg.name,
        pkg.versions.length
          ? h('span', { class: 'jp-GpuEnv-pkgVersion' }, pkg.versions[0])
          : null
      );
      chip.addEventListener('click', () => this._choose(pkg.name));
      return chip;
    });
    const more = found.total - chips.length;
    this.node.replaceChildren(
      ...chips,
      more > 0
        ? h('span', { class: 'jp-GpuEnv-fieldHint' }, `and ${more} more`)
        : ''
    );
  }

  /** Put `name` in place of the name being typed. */
  private _choose(name: string): void {
    const value = this._input.value;
    const cut = value.search(/[^\s,]*$/);
    this._input.value = value.slice(0, cut) + name;
    this._input.focus();
    this.node.replaceChildren();
  }

  private _timer = 0;
  private _asked = 0;
}
