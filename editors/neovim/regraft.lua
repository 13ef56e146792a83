-- Neovim 0.11+: put in init.lua (or a file under ~/.config/nvim/plugin/).
vim.filetype.add({ extension = { graft = 'graft' } })
vim.lsp.config('regraft', {
  cmd = { 'regraft', 'lsp' },
  filetypes = { 'yaml', 'graft' },
  root_markers = { 'regraft.toml', 'pyproject.toml', '.git' },
})
vim.lsp.enable('regraft')
