import { RENDER_SCRIPT } from './page-render.js';

/**
 * The page's behaviour, as browser script text: decisions are kept on the page until "Apply
 * decisions" sends them all at once (one change of the review model).
 */
const MAIN_SCRIPT = String.raw`
var state = { files: [], decisions: new Map(), reasons: new Map(), conflicts: new Map(), current: null, busy: false };
var viewSelect = document.getElementById('view');
var commitButton = document.getElementById('commit');
var statusBox = document.getElementById('status');

function showStatus(text, isError) {
  statusBox.hidden = !text;
  statusBox.textContent = text || '';
  statusBox.classList.toggle('error', !!isError);
}

function fileOf(id) {
  return state.files.find(function (f) { return f.id === id || f.hunks.some(function (h) { return h.id === id; }); });
}

// A hunk's decision and its file's exclude each other.
function decide(id, decision) {
  var file = fileOf(id);
  if (!file) return;
  var same = state.decisions.get(id) === decision;
  if (id === file.id) file.hunks.forEach(function (h) { state.decisions.delete(h.id); });
  else state.decisions.delete(file.id);
  if (same) state.decisions.delete(id); else state.decisions.set(id, decision);
  render();
}

function decisionButtons(id, reasonFor) {
  var accept = el('button', 'accept', 'Accept'), reject = el('button', 'reject', 'Reject');
  accept.type = reject.type = 'button';
  accept.dataset.id = reject.dataset.id = id;
  accept.setAttribute('aria-pressed', String(state.decisions.get(id) === 'accept'));
  reject.setAttribute('aria-pressed', String(state.decisions.get(id) === 'reject'));
  accept.addEventListener('click', function () { decide(id, 'accept'); });
  reject.addEventListener('click', function () { decide(id, 'reject'); if (state.decisions.get(id) === 'reject') focusReason(id); });
  return [accept, reject];
}

function reasonBox(id) {
  var input = el('input', 'reason');
  input.type = 'text';
  input.dataset.id = id;
  input.placeholder = 'Why? (told to the agent)';
  input.setAttribute('aria-label', 'Reason for rejecting');
  input.value = state.reasons.get(id) || '';
  input.addEventListener('input', function () { state.reasons.set(id, input.value); });
  input.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === 'Escape') { e.preventDefault(); input.blur(); select(id); } });
  return input;
}

function decisionClass(node, id) {
  var d = state.decisions.get(id);
  node.classList.toggle('accepted', d === 'accept');
  node.classList.toggle('rejected', d === 'reject');
}

function hunkNode(file, hunk) {
  var node = el('div', 'hunk item');
  node.dataset.id = hunk.id;
  node.tabIndex = -1;
  decisionClass(node, hunk.id);
  var head = el('div', 'hunk-head');
  head.appendChild(el('span', 'range', rangeText(hunk)));
  var d = state.decisions.get(hunk.id) || state.decisions.get(file.id);
  head.appendChild(el('span', 'decision', d === 'accept' ? 'accepted' : d === 'reject' ? 'rejected' : ''));
  decisionButtons(hunk.id).forEach(function (b) { head.appendChild(b); });
  node.appendChild(head);
  node.appendChild(reasonBox(hunk.id));
  node.appendChild(viewSelect.value === 'split' ? splitTable(hunk) : unifiedTable(hunk));
  node.addEventListener('click', function (e) { if (!e.target.closest('button, input')) select(hunk.id); });
  return node;
}

function fileNode(file) {
  var node = el('section', 'file');
  node.id = 'file-' + file.id;
  node.dataset.path = file.path;
  decisionClass(node, file.id);
  var head = el('div', 'file-head');
  head.appendChild(el('span', 'path', file.path));
  head.appendChild(el('span', 'badge ' + file.status, file.status));
  var c = counts(file);
  head.appendChild(el('span', 'n-add', '+' + c.add));
  head.appendChild(el('span', 'n-del', '\u2212' + c.del));
  decisionButtons(file.id).forEach(function (b) { b.textContent += ' file'; head.appendChild(b); });
  node.appendChild(head);
  node.appendChild(reasonBox(file.id));
  var conflict = state.conflicts.get(file.path);
  if (conflict) node.appendChild(el('div', 'conflict', 'Not applied: ' + conflict.message + ' (' + conflict.code + ')'));
  if (file.hunks.length === 0) {
    node.classList.add('item');
    node.dataset.id = file.id;
    node.tabIndex = -1;
    node.appendChild(el('div', 'note', kindNote(file)));
  }
  file.hunks.forEach(function (h) { node.appendChild(hunkNode(file, h)); });
  return node;
}

function listItem(file) {
  var li = el('li'), a = el('a'), c = counts(file);
  a.href = '#file-' + file.id;
  a.appendChild(el('span', 'name', file.path));
  a.appendChild(el('span', 'n-add', '+' + c.add));
  a.appendChild(el('span', 'n-del', '\u2212' + c.del));
  a.appendChild(el('span', 'n-hunks', file.hunks.length === 1 ? '1 hunk' : file.hunks.length + ' hunks'));
  li.appendChild(a);
  return li;
}

function render() {
  var list = document.getElementById('file-list'), diffs = document.getElementById('diffs');
  var focused = document.activeElement && document.activeElement.classList.contains('reason') ? document.activeElement.dataset.id : null;
  list.replaceChildren.apply(list, state.files.map(listItem));
  diffs.replaceChildren.apply(diffs, state.files.map(fileNode));
  if (state.files.length === 0) diffs.appendChild(el('p', 'note', 'No changes to review.'));
  var hunks = state.files.reduce(function (n, f) { return n + f.hunks.length; }, 0);
  document.getElementById('summary').textContent = state.files.length + (state.files.length === 1 ? ' file, ' : ' files, ') + hunks + (hunks === 1 ? ' hunk' : ' hunks') + ' \u00b7 ' + state.decisions.size + ' decided';
  commitButton.disabled = state.busy || state.decisions.size === 0;
  if (state.current) select(state.current, true);
  if (focused) focusReason(focused);
}

function items() { return Array.prototype.slice.call(document.querySelectorAll('.item')); }

function select(id, quiet) {
  state.current = id;
  items().forEach(function (n) { n.classList.toggle('current', n.dataset.id === id); });
  var node = items().find(function (n) { return n.dataset.id === id; });
  if (node && !quiet) { node.focus({ preventScroll: true }); node.scrollIntoView({ block: 'nearest' }); }
}

function focusReason(id) {
  var input = document.querySelector('input.reason[data-id="' + CSS.escape(id) + '"]');
  if (input) input.focus();
}

function move(step) {
  var all = items();
  if (all.length === 0) return;
  var at = all.findIndex(function (n) { return n.dataset.id === state.current; });
  var next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
  select(all[next].dataset.id);
}

document.addEventListener('keydown', function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey || e.target.closest('input, select, textarea')) return;
  if (e.key === 'j') move(1);
  else if (e.key === 'k') move(-1);
  else if ((e.key === 'a' || e.key === 'r') && state.current) {
    decide(state.current, e.key === 'a' ? 'accept' : 'reject');
    if (e.key === 'r' && state.decisions.get(state.current) === 'reject') { e.preventDefault(); focusReason(state.current); }
  } else return;
  e.preventDefault();
});

async function api(path, init) {
  var res = await fetch(path, Object.assign({ credentials: 'same-origin' }, init));
  var body = await res.json().catch(function () { return {}; });
  if (!res.ok) throw new Error(body.error ? body.error.message : 'HTTP ' + res.status);
  return body;
}

// Decisions on hunks that are gone (the agent changed them) go too.
async function load() {
  try {
    state.files = (await api('/api/files')).files;
    var ids = new Set();
    state.files.forEach(function (f) { ids.add(f.id); f.hunks.forEach(function (h) { ids.add(h.id); }); });
    Array.from(state.decisions.keys()).forEach(function (id) { if (!ids.has(id)) state.decisions.delete(id); });
    if (state.current && !ids.has(state.current)) state.current = null;
    render();
  } catch (err) {
    showStatus('Could not load the changes: ' + err.message, true);
  }
}

async function commit() {
  var decisions = Array.from(state.decisions, function (entry) {
    var reason = entry[1] === 'reject' ? (state.reasons.get(entry[0]) || '').trim() : '';
    return reason ? { id: entry[0], decision: entry[1], reason: reason } : { id: entry[0], decision: entry[1] };
  });
  state.busy = true;
  render();
  try {
    var result = await api('/api/decide', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decisions: decisions }) });
    state.decisions.clear();
    state.conflicts = new Map(result.conflicts.map(function (c) { return [c.path, c]; }));
    var text = 'Applied: ' + result.accepted.length + ' accepted, ' + result.rejected.length + ' rejected.';
    if (result.conflicts.length) text += ' ' + result.conflicts.length + ' not applied (changed meanwhile): ' + result.conflicts.map(function (c) { return c.path; }).join(', ');
    showStatus(text, result.conflicts.length > 0);
  } catch (err) {
    showStatus('Nothing applied: ' + err.message, true);
  }
  state.busy = false;
  await load();
}

commitButton.addEventListener('click', commit);
document.getElementById('reload').addEventListener('click', load);
viewSelect.addEventListener('change', render);
new EventSource('/api/events').addEventListener('change', function () {
  clearTimeout(state.reload);
  state.reload = setTimeout(load, 50);
});
load();
`;

export const PAGE_SCRIPT = `'use strict';\n(function () {\n${RENDER_SCRIPT}\n${MAIN_SCRIPT}\n})();\n`;
