/**
 * The body of the Packages dialog: conda specs and PyPI requirements to add,
 * installed packages to remove. What it gives is planned by the server
 * before anything changes.
 */
import { FormBody, field, h, textInput } from '../../components/form';
import { IPackage } from '../../api/types';
import { parseRequirements, parseSpecs } from '../format';
import { SearchFn, Suggestions } from '../suggest';

export interface IPackagesValue {
  add: string[];
  remove: string[];
  pip_add: string[];
  pip_remove: string[];
}

/**
 * Conda specs and PyPI requirements to add, and checkboxes of the installed
 * packages to remove (conda ones and those installed with pip, apart).
 */
export class PackagesForm extends FormBody<IPackagesValue> {
  /** `typed`: what the dialog held before (back from the plan). */
  constructor(packages: IPackage[], search?: SearchFn, typed?: IPackagesValue) {
    super();
    this._add = textInput({
      placeholder: 'tensorboard, numpy >=1.26',
      'data-testid': 'gpu-env-packages-add'
    });
    this._pipAdd = textInput({
      placeholder: 'transformers, requests >=2.31',
      'data-testid': 'gpu-env-packages-pip-add'
    });
    const suggest = (input: HTMLInputElement, kind: 'conda' | 'pypi') =>
      search ? new Suggestions(input, kind, search).node : null;
    this.node.append(
      field(
        'Add conda packages',
        this._add,
        "Conda specs, separated by commas or spaces; solved against the server's channels."
      ),
      ...[suggest(this._add, 'conda')].filter(n => n !== null),
      field(
        'Add PyPI packages',
        this._pipAdd,
        'Requirements for pip, installed after the conda ones with this ' +
          "environment's Python. Prefer conda where a package exists there."
      ),
      ...[suggest(this._pipAdd, 'pypi')].filter(n => n !== null)
    );
    this._conda = this._checkList(packages, 'conda', 'gpu-env-packages-remove');
    this._pypi = this._checkList(
      packages,
      'pypi',
      'gpu-env-packages-pip-remove'
    );
    if (typed) {
      this._add.value = typed.add.join(', ');
      this._pipAdd.value = typed.pip_add.join(', ');
      const tick = (boxes: HTMLInputElement[], names: string[]) =>
        boxes.forEach(box => (box.checked = names.includes(box.value)));
      tick(this._conda, typed.remove);
      tick(this._pypi, typed.pip_remove);
    }
    this.node.append(
      h(
        'div',
        { class: 'jp-GpuEnv-fieldHint' },
        'Nothing changes yet: the next step shows the plan, including packages ' +
          'removed along with the ones you pick.'
      )
    );
  }

  getValue(): IPackagesValue {
    const checked = (boxes: HTMLInputElement[]) =>
      boxes.filter(b => b.checked).map(b => b.value);
    return {
      add: parseSpecs(this._add.value),
      remove: checked(this._conda),
      pip_add: parseRequirements(this._pipAdd.value),
      pip_remove: checked(this._pypi)
    };
  }

  private _checkList(
    packages: IPackage[],
    kind: IPackage['kind'],
    testid: string
  ): HTMLInputElement[] {
    const chosen = packages.filter(p => p.kind === kind);
    const boxes: HTMLInputElement[] = [];
    if (chosen.length === 0) {
      return boxes;
    }
    const list = h('ul', {
      class: 'jp-GpuEnv-checkList',
      'data-testid': testid
    });
    for (const pkg of chosen) {
      const box = h('input', { type: 'checkbox', value: pkg.name });
      boxes.push(box);
      list.append(
        h(
          'li',
          {},
          h(
            'label',
            {},
            box,
            h('span', { class: 'jp-GpuEnv-pkgName' }, pkg.name),
            h('span', { class: 'jp-GpuEnv-pkgVersion' }, pkg.version)
          )
        )
      );
    }
    const label =
      kind === 'conda' ? 'Remove conda packages' : 'Remove PyPI packages';
    this.node.append(h('div', { class: 'jp-GpuEnv-fieldLabel' }, label), list);
    return boxes;
  }

  private _add: HTMLInputElement;
  private _pipAdd: HTMLInputElement;
  private _conda: HTMLInputElement[];
  private _pypi: HTMLInputElement[];
}
