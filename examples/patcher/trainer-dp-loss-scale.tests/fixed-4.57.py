# regraft: with transformers=4.57.6
# regraft: unchanged
class Trainer:
    def compute_loss(self, model, inputs, num_items_in_batch=None):
        loss = model(**inputs)[0]
        if self.args.average_tokens_across_devices and num_items_in_batch is not None:
            loss *= self.accelerator.num_processes if self.args.n_gpu <= 1 else self.args.n_gpu
        return loss
