/** The page's style: colours say added/removed/decided only; code is not coloured by language. */
export const PAGE_STYLE = `
:root { color-scheme: light; --add: #e6ffec; --add-strong: #abf2bc; --del: #ffebe9; --del-strong: #ffc1bb;
  --line: #d0d7de; --muted: #57606a; --accept: #1a7f37; --reject: #cf222e; --focus: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: #1f2328; background: #f6f8fa; }
header { position: sticky; top: 0; z-index: 2; display: flex; gap: 1em; align-items: center; padding: .5em 1em; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 16px; margin: 0; }
#summary { color: var(--muted); flex: 1; }
button { font: inherit; padding: .2em .8em; border: 1px solid var(--line); border-radius: 6px; background: #f6f8fa; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
#commit { background: var(--accept); color: #fff; border-color: var(--accept); }
#status { margin: .5em 1em; padding: .5em .8em; border-radius: 6px; background: #ddf4ff; border: 1px solid #54aeff; white-space: pre-wrap; }
#status.error { background: var(--del); border-color: var(--reject); }
main { display: grid; grid-template-columns: minmax(14em, 22%) 1fr; gap: 1em; padding: 1em; align-items: start; }
nav { position: sticky; top: 3.5em; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
nav ul { list-style: none; margin: 0; padding: 0; }
nav li a { display: flex; gap: .5em; padding: .35em .7em; color: inherit; text-decoration: none; border-bottom: 1px solid #eaeef2; }
nav li a:hover { background: #f6f8fa; }
nav .name { flex: 1; overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: 12.5px; }
.n-add { color: var(--accept); } .n-del { color: var(--reject); } .n-hunks { color: var(--muted); }
.file { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin-bottom: 1em; }
.file-head { display: flex; gap: .6em; align-items: center; padding: .5em .8em; border-bottom: 1px solid var(--line); background: #f6f8fa; border-radius: 6px 6px 0 0; }
.file-head .path { flex: 1; font-family: ui-monospace, monospace; font-weight: 600; overflow-wrap: anywhere; }
.badge { font-size: 12px; padding: 0 .5em; border-radius: 1em; border: 1px solid var(--line); color: var(--muted); }
.badge.added { color: var(--accept); border-color: var(--accept); } .badge.deleted { color: var(--reject); border-color: var(--reject); }
.conflict { margin: .5em .8em; padding: .4em .7em; border: 1px solid var(--reject); background: var(--del); border-radius: 6px; }
.note { padding: .6em .8em; color: var(--muted); }
.item { border-left: 4px solid transparent; outline: none; }
.item.current { border-left-color: var(--focus); box-shadow: inset 0 0 0 1px var(--focus); }
.item.accepted .hunk-head, .file.accepted > .file-head { background: #dafbe1; }
.item.rejected .hunk-head, .file.rejected > .file-head { background: #ffebe9; }
.hunk + .hunk { border-top: 1px solid var(--line); }
.hunk-head { display: flex; gap: .5em; align-items: center; padding: .3em .8em; background: #ddf4ff; font-family: ui-monospace, monospace; font-size: 12.5px; }
.hunk-head .range { flex: 1; color: var(--muted); }
.decision { font-family: system-ui, sans-serif; font-weight: 600; }
.accepted .decision { color: var(--accept); } .rejected .decision { color: var(--reject); }
button.accept[aria-pressed="true"] { background: var(--accept); color: #fff; border-color: var(--accept); }
button.reject[aria-pressed="true"] { background: var(--reject); color: #fff; border-color: var(--reject); }
.reason { display: none; margin: .4em .8em; width: calc(100% - 1.6em); font: inherit; padding: .3em .5em; border: 1px solid var(--reject); border-radius: 6px; }
.rejected > .reason, .rejected > .file-head + .reason { display: block; }
table.diff { width: 100%; border-collapse: collapse; table-layout: fixed; font-family: ui-monospace, monospace; font-size: 12.5px; }
table.diff td { padding: 0 .5em; vertical-align: top; white-space: pre-wrap; overflow-wrap: anywhere; }
table.diff td.no { width: 3.5em; color: var(--muted); text-align: right; user-select: none; }
table.diff td.sign { width: 1.2em; user-select: none; }
table.diff.split td.code { width: calc(50% - 4.7em); }
td.add { background: var(--add); } td.del { background: var(--del); } td.empty { background: #f6f8fa; }
td.add .chg { background: var(--add-strong); } td.del .chg { background: var(--del-strong); }
td.meta { color: var(--muted); font-style: italic; }
footer { padding: .5em 1em 2em; color: var(--muted); }
kbd { font-family: ui-monospace, monospace; border: 1px solid var(--line); border-radius: 4px; padding: 0 .3em; background: #fff; }
`;
