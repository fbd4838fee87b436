import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { formatTools, patchTools, textEditorTool, toolDefinitions } from '../../src/tools/index.js';

describe('definitions of the protocol tools', () => {
  it('declares the text editor natively for Anthropic, with max_characters when set', () => {
    const defs = toolDefinitions({ textEditor: true, search: false });
    expect(defs.at(-1)).toEqual({ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' });
    expect(toolDefinitions({ textEditor: { maxCharacters: 5000 }, search: false }).at(-1)).toEqual({
      type: 'text_editor_20250728',
      name: 'str_replace_based_edit_tool',
      max_characters: 5000,
    });
    // Without the tool, no declaration.
    expect(toolDefinitions({ search: false }).map((d) => d.name)).toEqual(['read', 'write', 'edit', 'list']);
  });

  it('declares it natively when formatting a registry that has it, and as a function for OpenAI', () => {
    const ctx = createHarness({ fs: createMemoryFs({ cwd: '/w' }), plugins: [patchTools(), textEditorTool()] });
    expect(formatTools(ctx.tools.list(), 'anthropic')).toEqual([
      expect.objectContaining({ name: 'apply_patch', input_schema: expect.objectContaining({ required: ['input'] }) }),
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
    ]);
    expect(formatTools(ctx.tools.list(), 'anthropic', { nativeTextEditor: false })[1]).toMatchObject({ name: 'str_replace_based_edit_tool', input_schema: { type: 'object' } });
    const openai = formatTools(ctx.tools.list(), 'openai');
    expect(openai[1]).toMatchObject({ type: 'function', function: { name: 'str_replace_based_edit_tool' } });
  });

  it('has an openai-responses shape: a flat strict function tool', () => {
    const defs = toolDefinitions({ format: 'openai-responses', patch: true, search: false });
    expect(defs.map((d) => d.name)).toEqual(['read', 'write', 'edit', 'list', 'apply_patch']);
    for (const d of defs) {
      expect(Object.keys(d).sort()).toEqual(['description', 'name', 'parameters', 'strict', 'type']);
      expect(d.type).toBe('function');
      expect(d.strict).toBe(true);
      const p = d.parameters as { properties: object; required: string[]; additionalProperties: boolean };
      expect(p.required).toEqual(Object.keys(p.properties));
      expect(p.additionalProperties).toBe(false);
    }
    const edit = defs.find((d) => d.name === 'edit')!.parameters as { properties: { edits: { type: unknown; items: { required: string[] } } } };
    expect(edit.properties.edits.type).toEqual(['array', 'null']);
    expect(edit.properties.edits.items.required).toEqual(['old_string', 'new_string', 'replace_all']);
  });
});
