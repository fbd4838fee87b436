/**
 * The page's diff rendering, as browser script text (no template literals inside). Text is
 * always set with textContent, never parsed as HTML: a file's content cannot become markup.
 */
export const RENDER_SCRIPT = String.raw`
function el(tag, cls, text) {
  var node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function counts(file) {
  var add = 0, del = 0;
  file.hunks.forEach(function (h) {
    h.lines.forEach(function (l) { if (l[0] === '+') add++; else if (l[0] === '-') del++; });
  });
  return { add: add, del: del };
}

// The part of two paired lines that differs, as [prefix, middle, suffix] lengths.
function changedSpan(a, b) {
  var p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  var s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return [p, s];
}

function codeCell(cls, text, other) {
  var td = el('td', 'code ' + cls);
  if (other === undefined || text === other) { td.textContent = text; return td; }
  var span = changedSpan(text, other);
  td.appendChild(document.createTextNode(text.slice(0, span[0])));
  td.appendChild(el('span', 'chg', text.slice(span[0], text.length - span[1])));
  td.appendChild(document.createTextNode(text.slice(text.length - span[1])));
  return td;
}

// The hunk's lines as rows: context, a run of removals, then the run of additions that replaced them.
function hunkRows(hunk) {
  var rows = [], oldNo = hunk.oldStart, newNo = hunk.newStart, i = 0, lines = hunk.lines;
  while (i < lines.length) {
    var c = lines[i][0];
    if (c === '-' || c === '+') {
      var dels = [], adds = [];
      while (i < lines.length && lines[i][0] === '-') dels.push({ no: oldNo++, text: lines[i++].slice(1) });
      while (i < lines.length && lines[i][0] === '+') adds.push({ no: newNo++, text: lines[i++].slice(1) });
      rows.push({ kind: 'change', dels: dels, adds: adds });
    } else if (c === '\\') {
      rows.push({ kind: 'meta', text: lines[i++] });
    } else {
      rows.push({ kind: 'context', oldNo: oldNo++, newNo: newNo++, text: lines[i++].slice(1) });
    }
  }
  return rows;
}

function numberCell(no) { return el('td', 'no', no === undefined ? '' : String(no)); }

function unifiedTable(hunk) {
  var table = el('table', 'diff unified');
  hunkRows(hunk).forEach(function (row) {
    if (row.kind === 'meta') {
      var tr = el('tr'); var td = el('td', 'meta', row.text); td.colSpan = 4; tr.appendChild(td); table.appendChild(tr);
    } else if (row.kind === 'context') {
      var ctx = el('tr');
      [numberCell(row.oldNo), numberCell(row.newNo), el('td', 'sign', ' '), codeCell('', row.text)].forEach(function (c) { ctx.appendChild(c); });
      table.appendChild(ctx);
    } else {
      row.dels.forEach(function (d, k) {
        var tr = el('tr');
        var pair = row.adds[k] && row.adds[k].text;
        [numberCell(d.no), numberCell(), el('td', 'sign del', '-'), codeCell('del', d.text, pair)].forEach(function (c) { tr.appendChild(c); });
        table.appendChild(tr);
      });
      row.adds.forEach(function (a, k) {
        var tr = el('tr');
        var pair = row.dels[k] && row.dels[k].text;
        [numberCell(), numberCell(a.no), el('td', 'sign add', '+'), codeCell('add', a.text, pair)].forEach(function (c) { tr.appendChild(c); });
        table.appendChild(tr);
      });
    }
  });
  return table;
}

function splitTable(hunk) {
  var table = el('table', 'diff split');
  hunkRows(hunk).forEach(function (row) {
    if (row.kind === 'meta') {
      var tr = el('tr'); var td = el('td', 'meta', row.text); td.colSpan = 6; tr.appendChild(td); table.appendChild(tr);
    } else if (row.kind === 'context') {
      var ctx = el('tr');
      [numberCell(row.oldNo), el('td', 'sign', ' '), codeCell('', row.text), numberCell(row.newNo), el('td', 'sign', ' '), codeCell('', row.text)].forEach(function (c) { ctx.appendChild(c); });
      table.appendChild(ctx);
    } else {
      for (var k = 0; k < Math.max(row.dels.length, row.adds.length); k++) {
        var d = row.dels[k], a = row.adds[k], tr = el('tr');
        var left = d ? [numberCell(d.no), el('td', 'sign del', '-'), codeCell('del', d.text, a && a.text)] : [numberCell(), el('td', 'sign empty'), el('td', 'code empty')];
        var right = a ? [numberCell(a.no), el('td', 'sign add', '+'), codeCell('add', a.text, d && d.text)] : [numberCell(), el('td', 'sign empty'), el('td', 'code empty')];
        left.concat(right).forEach(function (c) { tr.appendChild(c); });
        table.appendChild(tr);
      }
    }
  });
  return table;
}

function rangeText(h) {
  return '@@ -' + h.oldStart + ',' + h.oldLines + ' +' + h.newStart + ',' + h.newLines + ' @@';
}

function kindNote(file) {
  var what = file.kind === 'text' ? 'file' : file.kind === 'mode' ? 'mode change' : file.kind;
  if (file.kind === 'text' && file.hunks.length === 0) what = 'empty file';
  return what + ' ' + file.status + ': decide for the whole file';
}
`;
