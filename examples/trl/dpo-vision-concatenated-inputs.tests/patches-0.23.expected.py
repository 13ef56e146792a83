# regraft: path trl/trainer/dpo_trainer.py
import torch


class DPOTrainer(Trainer):
    @staticmethod
    def concatenated_inputs(batch, padding_value):
        output = {}
        if "image_sizes" in batch:
            output["image_sizes"] = torch.cat([batch["image_sizes"], batch["image_sizes"]], dim=0)
        for key in ("pixel_position_ids", "image_position_ids", "mm_token_type_ids"):
            if key in batch:
                output[key] = torch.cat((batch[key], batch[key]), dim=0)
        return output
