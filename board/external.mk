include $(sort $(wildcard $(BR2_EXTERNAL_KIOSKCAM_PATH)/package/*/*.mk))
