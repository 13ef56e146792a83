# regraft: path trl/trainer/dpo_trainer.py
class DPOTrainer(Trainer):
    def concatenated_forward(self, model, batch):
        concatenated_batch = self.concatenated_inputs(batch, padding_value=0)
        model_kwargs = {}
        if "pixel_values" in concatenated_batch:
            model_kwargs["pixel_values"] = concatenated_batch["pixel_values"]
        if "pixel_attention_mask" in concatenated_batch:
            model_kwargs["pixel_attention_mask"] = concatenated_batch["pixel_attention_mask"]
        if "image_sizes" in concatenated_batch:
            model_kwargs["image_sizes"] = concatenated_batch["image_sizes"]
        return model(**model_kwargs)
