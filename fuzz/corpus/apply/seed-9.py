class Block(nn.Module):
    def forward(self, h, mask=None, scale=1.0, use_cache=False):
        return h


class Model(nn.Module):
    @torch.compile(mode="x")
    def run(self, h, m):
        """Runs."""
        h = self.layer(h, mask=m, use_cache=True)
        debug(h)
        for block in self.blocks:
            h = self.layer(
                h,  # note
                scale=f(g(x), [1, 2]),
            )
        return h
