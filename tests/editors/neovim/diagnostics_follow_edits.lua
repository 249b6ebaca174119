-- Headless Neovim (Debian's 0.7 or later) as the language server's client, driven by
-- crates/germanium-cli/tests/neovim.rs: opens a Viper file, waits for Germanium's
-- diagnostics, edits the buffer and checks that the diagnostics follow the edit, saves,
-- and asks for hover, code lenses, symbols and a definition. Any failure ends Neovim with
-- exit status 1 and a line on stderr saying what was expected.

local bin = assert(os.getenv('GERMANIUM_BIN'), 'GERMANIUM_BIN')
local file = assert(os.getenv('GERMANIUM_TEST_FILE'), 'GERMANIUM_TEST_FILE')
local patience = 120000

local function say(text) io.stderr:write(text .. '\n') end

local function fail(text)
  say('FAIL: ' .. text)
  vim.cmd('cquit 1')
end

local function wait_for(what, ready)
  if not vim.wait(patience, ready, 50) then
    fail('timed out waiting for ' .. what .. '; diagnostics: ' .. vim.inspect(vim.diagnostic.get(0)))
  end
end

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local client = vim.lsp.start_client({
  name = 'germanium',
  cmd = { bin, 'lsp', '--no-cache', '--debounce-ms', '100' },
  root_dir = vim.fn.fnamemodify(file, ':p:h'),
})
if not client then fail('the client did not start') end
vim.lsp.buf_attach_client(buf, client)

local function diagnostics() return vim.diagnostic.get(buf) end

local function request(method, params)
  local answers = vim.lsp.buf_request_sync(buf, method, params, patience)
  local answer = answers and answers[client]
  if not answer or answer.err then fail(method .. ' failed: ' .. vim.inspect(answers)) end
  return answer.result
end

local function position(line, character)
  return { textDocument = vim.lsp.util.make_text_document_params(buf),
           position = { line = line, character = character } }
end

-- 1. On open: the failing assertion on line 4 (0-based 3).
wait_for('the first diagnostics', function() return #diagnostics() > 0 end)
local first = diagnostics()[1]
if first.lnum ~= 3 or first.code ~= 'assert.failed:assertion.false' then
  fail('expected the assertion error on line 4, got ' .. vim.inspect(first))
end
say('ok: diagnostic on open at line ' .. (first.lnum + 1) .. ': ' .. first.message)

-- 2. Hover over it: the reason and a counterexample.
local hover = request('textDocument/hover', position(3, 12))
local text = hover and hover.contents and hover.contents.value or ''
if not text:find('assertion.false', 1, true) or not text:find('counterexample', 1, true) then
  fail('hover without reason or counterexample: ' .. vim.inspect(hover))
end
say('ok: hover shows the reason and a counterexample')

-- 3. Code lenses: one per member, with its result.
local lenses = request('textDocument/codeLens', { textDocument = vim.lsp.util.make_text_document_params(buf) })
local titles = {}
for _, lens in ipairs(lenses or {}) do table.insert(titles, lens.command.title) end
if #titles ~= 2 or not titles[1]:find('1 error', 1, true) or not titles[2]:find('verified', 1, true) then
  fail('unexpected code lenses: ' .. vim.inspect(titles))
end
say('ok: code lenses ' .. table.concat(titles, ' | '))

-- 4. Symbols and a definition.
local symbols = request('textDocument/documentSymbol', { textDocument = vim.lsp.util.make_text_document_params(buf) })
local names = {}
for _, s in ipairs(symbols or {}) do table.insert(names, s.name) end
if table.concat(names, ',') ~= 'val,inc,get' then fail('unexpected symbols: ' .. vim.inspect(names)) end
local definition = request('textDocument/definition', position(2, 5))
if not definition or definition.range.start.line ~= 0 then
  fail('x.val should lead to line 1: ' .. vim.inspect(definition))
end
say('ok: symbols ' .. table.concat(names, ', ') .. '; definition of val on line 1')

-- 5. Edit: mend the assertion; the diagnostics go away.
vim.api.nvim_buf_set_lines(buf, 3, 4, false, { '  assert x.val == old(x.val) + 1' })
wait_for('the diagnostics to clear after the edit', function() return #diagnostics() == 0 end)
say('ok: the edit cleared the diagnostics')

-- 6. Edit again: a new error on another line (6, 0-based 5), then save.
vim.api.nvim_buf_set_lines(buf, 5, 6, false, { 'function get(x: Ref): Int requires acc(x.val) ensures result > 0 { x.val }' })
wait_for('the postcondition error after the second edit', function()
  local now = diagnostics()
  return #now == 1 and now[1].lnum == 5
end)
say('ok: the second edit moved the diagnostic to line 6: ' .. diagnostics()[1].message)
vim.cmd('write')
say('ok: saved')

vim.lsp.stop_client(client)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client) == nil end, 50)
vim.cmd('qall!')
