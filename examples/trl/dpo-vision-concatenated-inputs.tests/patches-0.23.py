# regraft: path trl/trainer/dpo_trainer.py
import torch


class DPOTrainer(Trainer):
    @staticmethod
    def concatenated_inputs(batch, padding_value):
        output = {}
        if "image_sizes" in batch:
            output["image_sizes"] = torch.cat([batch["image_sizes"], batch["image_sizes"]], dim=0)
        return output
