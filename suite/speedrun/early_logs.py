"""The logs of the pinned history (modded-nanogpt at f411b3d) dated before February 2025, by the
sha256 of their bytes: the only logs whose step_avg may leave out the first
:data:`~suite.speedrun.plausible.WARMUP_STEPS` steps (:func:`suite.speedrun.plausible.run_flags`).

A fixed list, not a date read from a path: a folder's date is written by whoever adds the folder,
so a new record named ``2024-…`` would otherwise get the allowance. The 195 distinct hashes of
the 200 modded-nanogpt-format logs (of 203) under folders dated before 2025-02-01 (records and baselines of
both tracks; byte-equal copies share a hash), each with the paths it has in the history: a
stored document's ``log_sha256`` is self-reported, so the allowance needs the hash and the path
to match (a 2026 folder claiming an early hash gets none). A test checks the map against a
checkout of f411b3d.
"""
from __future__ import annotations

EARLY_LOGS: dict[str, tuple[str, ...]] = {
    "0103857d853eb1a4fd7e4501de66817c3a643dc49863b382d214141438924d3b": (
        "records/track_1_short/2024-12-10_MFUTweaks/3a714803-f1e1-4b81-b984-e2457ccb664f.txt",
    ),
    "025457d887fa3a9fe9ebf46f51613d2f701ec77561c290088906c26dea375b62": (
        "records/track_1_short/2024-10-20_ScaleUp1B/c0078066-c8c9-49c8-868a-ff4d4f32e615.txt",
    ),
    "03332c8556007d364e393557ac1c9c827bf7cf5bafb3ce5f20a92c8f75ebf91c": (
        "records/track_1_short/2024-10-29_Optimizers/e21a2838-a0f2-46f2-a247-db0021165682.txt",
    ),
    "0404bc339ae1a64a8cc3e985afbaada03aedfbd249a24ce497177da42bcbcad2": (
        "records/track_1_short/2024-11-10_UNetDoubleLr/c87bb826-797b-4f37-98c7-d3a5dad2de74.txt",
    ),
    "0601c17e189a237680b11eedbbafaa10fc32e846118dae99f006609fda528ae3": (
        "records/track_2_medium/2025-01-18/241dd7a7-3d76-4dce-85a4-7df60387f32a.txt",
    ),
    "060ebd8a22b2898728dbabbdf70628aac5aaefa087b711d67bf0f4fd276613a7": (
        "records/track_1_short/2024-11-14_QuantizedFP4/433c1732-0c3d-4099-a4a8-ec31eae49b16.txt",
    ),
    "065a2e2699072cf51aad3b38d25da9d62da3cbda4f740ef833b7f970f95bc37a": (
        "records/track_1_short/2024-12-10_MFUTweaks/d6ab1d3a-92f5-4847-8f3b-69faabc89c67.txt",
    ),
    "0a828e4c38002b21910b50b0800daffd2180c3c37d82c2fa11eb97eed9bdd5ac": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/6bf9356b-7ff8-4253-97b0-c2747ad5a52e.txt",
    ),
    "0b96101e5bca5cb26ca21af0512f17ad03851134a29a39017918668b38024013": (
        "records/track_1_short/2024-11-24_WindowWarmup/cf9e4571-c5fc-4323-abf3-a98d862ec6c8.txt",
    ),
    "0fb75b3ca1ce27ac17364fac031e7451bb879daaae327e034b334d3da292b540": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/13daf1c4-986b-4938-b269-1ac935891505.txt",
    ),
    "0fd659115d6ba8094d083ba6419cd18c704df2a2708749da30b87cf5863cae38": (
        "records/track_1_short/2024-11-08_CastBf16/a833bed8-2fa8-4cfe-af05-58c1cc48bc30.txt",
        "records/track_1_short/2024-11-10_ScaleShortcuts/a833bed8-2fa8-4cfe-af05-58c1cc48bc30.txt",
        "records/track_1_short/2024-11-14_QuantizedFP4/a833bed8-2fa8-4cfe-af05-58c1cc48bc30.txt",
    ),
    "1035519f1398ae9d60da883798998d2696f881368157a179d34fd27ae7fab352": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/5f2dc8e6-dfc3-4078-b756-e7521561ebce.txt",
    ),
    "11c763805fd3571dba7dad01a0f40b8c21fe17f5a8de55093674da3434989dcb": (
        "records/track_1_short/2024-12-04_ValueEmbed/67716aee-6747-4997-a37c-b96932fab4dd.txt",
    ),
    "132bf7847e99efb9af6aba5506ec8c4582dbc1db3e289e55b27c3fa0fb529391": (
        "records/track_1_short/2024-11-06_ShortcutsTweaks/10119f53-7001-4248-bfd9-33d32427a912.txt",
    ),
    "14410445d8de8363049636b0638728bd9e4e274456b456de8b8c1c3dd4a79886": (
        "records/track_1_short/2024-12-10_MFUTweaks/35c28373-6cf8-463c-8007-1146801f8068.txt",
    ),
    "1549caaae65c003bb002122349c24cbe5292dad7fa9d7d3ac21f922cfc0e619c": (
        "records/track_1_short/2024-12-04_ValueEmbed/b19b341a-bf8d-46f9-8076-fef1fcb7445e.txt",
    ),
    "18d9880980da7636f540571f6feba31db8c8df7f1ce43cb96421467637414e02": (
        "records/track_1_short/2024-11-06_ShortcutsTweaks/43f60c4f-0448-4de7-83d9-643ca26f61e7.txt",
    ),
    "199e96d6d0a4de7be80e15894894a0699565b8bae098d2e1027bc5699b121ce9": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/e2f54f7a-f6c5-4fcf-bea6-e0442b62adca.txt",
    ),
    "1a925f9fcbef070dee204a2a0132a3cbac07f47de1ac5093d56c501717837d14": (
        "records/track_1_short/2024-12-10_MFUTweaks/30beb830-0f15-4a71-8c98-187ea2015606.txt",
    ),
    "21726c407dba72018bdbeffe9520c2cd63e744baf40411b294e2a6357a805ee5": (
        "records/track_1_short/2024-11-06_ShortcutsTweaks/05b29e54-0be0-4a0f-a1e2-7d5317daedd3.txt",
    ),
    "2216d97b66ba563bba680a4163b32d24759e5ed1c94c7a06596fdb68d5e2ab5e": (
        "records/track_1_short/2024-10-29_Optimizers/8d6193f4-27fc-4e68-899f-af70019a4d54.txt",
    ),
    "276c54acf81793db0c75aeb594bc41fff66eac4295180dfc03d88699f7d9b0eb": (
        "records/track_1_short/2024-10-17_DistributedMuon/22d24867-eb5a-4fcc-ae2c-263d0277dfd1.txt",
    ),
    "283db08bc85dfe215050ae3c1105b00defe86600f9c862efd2dbae746fb3305e": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/71e11d12-c639-4966-bd9a-be49de53bc9c.txt",
    ),
    "2b9f44939be49e93094f09be4becb2065e7082b01f66d6e00a91ed21d15a7b71": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/4a0f4d79-dc64-4731-b777-33f1e3ec6d3d.txt",
    ),
    "2d3675c8d9ce06248d6b2ebd0c3e82f5925a164ba375c9809674827c9e7fbc51": (
        "records/track_1_short/2024-11-24_WindowWarmup/d1cf11aa-7b8e-4d28-a94d-1aab632e0f38.txt",
    ),
    "2fa857b2a84eaadea1c1714f828b43b0fe6681b6e559b426040a25e677313afd": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/8a0afde4-391d-4e2d-8df1-e44fe0b80feb.txt",
    ),
    "30af29858b083c1e22107d2eaabd3926717cd010af71f5d11a47b80d64a44a2c": (
        "records/track_1_short/2024-12-10_MFUTweaks/e0f4f91a-4b79-4a39-a316-9ce769921840.txt",
    ),
    "31c950d325ce40e000397434e80de3f74fc6773c41c6015535697ea3089d6f23": (
        "records/track_1_short/2024-12-10_MFUTweaks/59b474de-a528-4040-b6f4-19c89c2041cf.txt",
    ),
    "329817e5b1acf5fc68d6d69db87f28f60e08bd41f38573f26a2717d36be00f0a": (
        "records/track_1_short/2024-12-04_ValueEmbed/3e39d446-d7e8-4c49-b92c-62c3848a3c01.txt",
    ),
    "33283343c81e4f02dc577a7786224a82bcc86170a19a89a4f6c0c7c3ad3940b8": (
        "records/track_1_short/2024-12-10_MFUTweaks/571574de-d894-49b1-8f02-281ddd607823.txt",
    ),
    "3410a918108ea9de38f84e61c63e67045f21b8b7dda32fa1aa69609c874e9ff3": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/be800e9a-90a5-457d-8f86-a943f4dea20c.txt",
    ),
    "347da758935793858cc980adb9e13ad11c517dd82fc2774476bd5adba57117ac": (
        "records/track_1_short/2024-12-04_ValueEmbed/d884d4cb-0656-460d-9454-897eb9789f2a.txt",
    ),
    "34e6a1acd6e6dd3dbcbd22e44474af5eeca39259c83e3383679079e8eb02da3b": (
        "records/track_1_short/2024-10-29_Optimizers/8bfe4e35-c3fc-4b70-a984-3be937b71ff3.txt",
    ),
    "34f3ae95655e7ae6b06f59f32b35b5d658fce9d5402cb8a8e22f475e276d6c31": (
        "records/track_1_short/2024-12-04_ValueEmbed/51faed93-0804-418c-9057-0d94c3f94a9c.txt",
    ),
    "3527a27c3cee95e3392951fbb25ccab68cbc901fd8d71110f4982b7e4a9a4fd8": (
        "records/track_1_short/2024-11-06_ShortcutsTweaks/042f9e87-07e6-4504-bb04-4ec59a380211.txt",
    ),
    "356e408d97120a588edc0d23d33ba46308379a74ff5cfbc2f119a4c6244c856e": (
        "records/track_1_short/2024-12-04_ValueEmbed/00008ea0-21dd-442a-82ee-d12799249d0f.txt",
    ),
    "38d005ffc0ee97589c8c74ce7e7655a9955e00b8e68faf234e006dd1854c4b69": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/569ca2ab-12e9-4035-a0c7-f18c7050d234.txt",
    ),
    "38f6cf34ce9709a0c13b64ac92bfe5a87fc4b3a67489f920275df3cc15e8e9e5": (
        "records/track_1_short/2024-12-10_MFUTweaks/04df8c70-2462-4b6c-9e49-c7589b321a81.txt",
    ),
    "3f7093c41de48c64b02188188de69ca953224812a8fa8244157ac62ab3099c0b": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/e3319113-ec3a-457a-975c-e89dcddd15f2.txt",
    ),
    "403eee39ed803093a9359edf3b7dbf95475fd8668c8f3e01d40ad1d0504ab3b1": (
        "records/track_1_short/2024-12-04_ValueEmbed/f0f173e3-69ee-4970-ba0b-f7f3e5d92e33.txt",
    ),
    "420a628c4bfbbb361384c86f3f94ab3a96c9ccc13229e7ece3d4b54a42a4a831": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/83d3d075-ede1-4b85-93ab-24dc38ae1bf5.txt",
    ),
    "43777dde6d2723d5cd6b23608425639364c5632c95766360f193f54c905eb243": (
        "records/track_1_short/2024-12-10_MFUTweaks/ac154191-d2fb-478a-b6ea-55276b4f6655.txt",
    ),
    "447d4704b4f809dea0934bef5365ce4840f371fe25935aac44fb829e1fad0113": (
        "records/track_1_short/2024-12-10_MFUTweaks/38757b64-ade6-45fa-b628-11cc83b6ed0c.txt",
    ),
    "48edacd12dbec6ae5cf1bc88e85f961a1c6283a9fa1d9379dc22bffe0e210f7c": (
        "records/track_1_short/2024-12-10_MFUTweaks/f2546c91-e2b3-4906-9f5b-bee25b47216f.txt",
    ),
    "49b0a08cda0cdde0f927a94e7d7e8adc43f9a1e6fe030235a60eed0f36e6f171": (
        "records/track_1_short/2024-12-10_MFUTweaks/feed17f1-d377-484b-b04b-0124144dfc62.txt",
    ),
    "4b2935b2aa05e68ddb8aa01135f862e34d2fbbecd9520db52510949b2c0be1b9": (
        "records/track_1_short/2024-12-10_MFUTweaks/47029c45-997b-4498-a5c0-2fc76d365eb8.txt",
    ),
    "4d47ef3452bc74453f7ab65a8febc5c6b60956132b143cae754d3a9055707644": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/6a4a3bd3-c3b5-4bef-9267-03724ba49759.txt",
    ),
    "4f49d2bc30143ec9d6387ec8655bcf911a681cc5549f5a6b2ebbfa1debaa05ee": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/bdcab079-8761-4bb8-b2bc-adc2a45fbc9a.txt",
    ),
    "4f976f733075ee59be15e014b45340b7918607bb3e7c07b430c2c922e3620310": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/ad6d9498-e76d-4ce4-acb5-fd2116eb77d8.txt",
    ),
    "50da773c87f725f1f7f33def502954af2fc6f0ee0c15b3a52e4501b42d920630": (
        "records/track_1_short/2024-12-10_MFUTweaks/e221be41-2c83-4158-98dd-2df74ad2b9ba.txt",
    ),
    "5164f80d594a83cb4ac19c18f8b5f6dfc7cee28bd4313f6ec728b4e09e76e168": (
        "records/track_1_short/2024-12-10_MFUTweaks/591496b6-fdce-4902-b279-4360b378865d.txt",
    ),
    "52573ff8f787f77ef4bef77dc5565c1a3a56a4f2faa5720386abb3c9e678c4f4": (
        "records/track_1_short/2024-12-04_ValueEmbed/d6520673-0f5f-4c28-898b-f52d056b257d.txt",
    ),
    "525cba6fb0874ffe02e1852dd5523ed9a2f478af80a39599879dfaad841cb67e": (
        "records/track_1_short/2024-11-24_WindowWarmup/ba299b7e-a36a-4fd8-a268-25bb772010dd.txt",
    ),
    "55e74960c4b39d188e2af37706f1e1fb36ee75e52ad1ab67fde6b95eab7d98f6": (
        "records/track_1_short/2024-12-04_ValueEmbed/6b244191-77a3-41ea-a314-82c6a9184b31.txt",
    ),
    "5667a9bbd05b0efab45f16c667d8a9e45a7c9b79771499216495e7815d9bfc4d": (
        "records/track_1_short/2024-12-17_SparsifyEmbeds/165384d5-5a41-4fba-9b79-8ecc372616ea.txt",
    ),
    "5bbebdbfa1b74b0eedbe01e0383a7e6028b75111be7ef3f5bdd32a82832fd5b7": (
        "records/track_1_short/2024-12-10_MFUTweaks/d00194c9-e6d0-4767-b703-7e3c3ff24881.txt",
    ),
    "5e268c06814d5a025b7a636af2016c41cd0cf3ea5a8cef04054915f8aae378ac": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/bc895608-3be1-4365-89ff-abbf6c316b37.txt",
    ),
    "5e5cc247b0c2d88850146449c5e5c4f929e146daee94a38f3896ac402ea08007": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/d69df4f4-5e17-45a3-94ba-5c2ec73a82e5.txt",
    ),
    "5f24c3022241b938bb44316c1f54d90125378b535c7553efb8c471517ca2130a": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/5fca3d5f-6290-47af-9130-b78a777b24c4.txt",
    ),
    "6164c3dc3bb2d63cdf9245975a3c1bd212ee2cb75049f3476007e58fa4d99240": (
        "records/track_1_short/2024-12-10_MFUTweaks/91b48522-0c7b-4fee-83ea-c01df3e3d5c0.txt",
    ),
    "62a6a39d32361f70d347fffae6f32d66f9f0870786d0886d8ff31e9b320098cd": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/0069607b-aa90-49fd-9766-4368bcd168c4.txt",
    ),
    "62a81a281be714d90e183c95b6190643940626f4dd9a9ba37b02e6ed704118ab": (
        "records/track_1_short/2025-01-26_BatchSize/0bdd5ee9-ac28-4202-bdf1-c906b102b0ec.txt",
    ),
    "6349b2afa7ffd443a02d7ae63615cf98ec889bdf938a73bc171098ef63760f4e": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/7de3e01c-69f5-4cfe-9e99-97413d15488c.txt",
    ),
    "63be4cbacbd8ef44279b4b1f0a887aedcba70dc1e04c8c9e5d0826c6a8bf15f8": (
        "records/track_1_short/2024-12-10_MFUTweaks/afcec83b-9286-455e-81a6-5eb3710d0ead.txt",
    ),
    "6464c6b945e997c4d646306605ba6da91dc5c8f535fb20a330b490be8662dd0a": (
        "records/track_1_short/2024-12-04_ValueEmbed/123ac41a-8f7b-42a1-853c-5a791dcaa7ae.txt",
    ),
    "65988933a183996d5dbc671b71ca489bd8877e267537e012b4ad335b35c7a9cd": (
        "records/track_1_short/2024-12-04_ValueEmbed/92b1541a-a6d6-4ddf-8932-ea4bcd31ba3b.txt",
    ),
    "690849017775a17f74fd39a1d56bc3983fb66e77a02f7232eb34c92041be4e0c": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/e66b0dd9-9680-4e7a-85c7-ac77f1d89aa2.txt",
    ),
    "69cf76e24fdf41225276b2464ebda6e3404ab737a02e8fa5c1afa9b88ceae85b": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/677ef1aa-30f7-4c4d-96c8-b85c7d70c4d6.txt",
    ),
    "69ee8998e6d6e3603f96136e3ec231e8b88830b448a1e01146b2ef941d3d9159": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/0ad22fc7-dd0c-4d79-a216-c7667db09e15.txt",
    ),
    "6b16c27164c62dffa826c6025b43681cda02242bf05a0c2a5c95cdad070826cf": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/93406931-1cc4-419c-b7a7-adef928d4c54.txt",
    ),
    "6c0e7754f934bb1f9eef3e124ac4f03e143ebc1214d0871263ebab328088f083": (
        "records/track_1_short/2024-10-20_ScaleUp1B/ad8d7ae5-7b2d-4ee9-bc52-f912e9174d7a.txt",
    ),
    "6c49c0c375da7af3e860b27cfb9e872d25837538a50e7b96f262fada553cf5d5": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/95dc5712-2fd2-45bf-89c9-a86d7704e3d0.txt",
    ),
    "6c677e672794ea82b1559694bffc2e08037a4cacb74f079c2b98b9d396700360": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/89ac99c6-838d-431b-967a-4bde4d81d6c4.txt",
    ),
    "6d1f7411c2294e561b7fb335722b5a3cd5e112833e55c7c086957e61214fc2d2": (
        "records/track_1_short/2024-12-04_ValueEmbed/66173c47-b15b-4a24-a835-60c82f6b8283.txt",
    ),
    "6d754e9e5f550cb85593cad4e3db728cac87e80c031578bd5b7cefe6a0861673": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/625a6fcc-203c-4545-b697-0b8daa2b6d07.txt",
    ),
    "6df9c4c3e5f516af6ec03db071335ffebbc3b0be9328ada29c6d851ac000aa67": (
        "records/track_1_short/2024-12-04_ValueEmbed/74cba1d4-da56-4334-9622-e0aa960dfe3f.txt",
    ),
    "6e12face40fe33ba67b72aae0aacbb3ee1b2d55340dff8a06a125ea4963dcc7d": (
        "records/track_1_short/2024-12-04_ValueEmbed/a5c54ede-2647-4df1-872d-de033898a9e2.txt",
    ),
    "6fb80e411f5facfc6907c7f9d8c268fd5a446b416e314e1f1bd58aca1a8702d0": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/16cacfc3-de94-429e-be3a-03c3c5293d08.txt",
    ),
    "7336dcd3f56defdb0a35237191603f7fae3af284a6cf646bb7da46d4d681ffd4": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/48359737-5c81-4653-8d5c-5c2da8405f16.txt",
    ),
    "76dd0c26e59f51ba1ed9a110f46c21e48416a9de554dc3625d88fff2b4aaa1e8": (
        "records/track_1_short/2024-10-10_Muon/eb5659d0-fb6a-49e5-a311-f1f89412f726.txt",
    ),
    "7725d86d449bd824aa13509a6f029f2b119dd6f36d27a3fb075156781eb7bc82": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/501b69a6-bcbc-4403-9bc0-c257bdc3f8b6.txt",
    ),
    "776d4431bee642dad9f7d89e4bee1778ff7d3640130cb7126929162794a34797": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/c2e4c338-f228-4ece-a8cb-1ccf5e949817.txt",
    ),
    "7a3babc9bbba757c27a3c08aa5fcd914606c6c2469705e1c676d2d12ccadc087": (
        "records/track_1_short/2024-10-18_PyTorch25/d4bfb25f-688d-4da5-8743-33926fad4842.txt",
    ),
    "7b2931609d73d3fb4e976c2228709deab2c42b1f5d222647f8557bc39d33ff26": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/472b8553-de0d-4f91-9285-10781b4cd07f.txt",
    ),
    "7fd45242c56c07bd51f03ecdd0e4ae39f639c519381d264701253791355d439c": (
        "records/track_1_short/2024-12-10_MFUTweaks/8dff461f-9696-4d45-b717-bad7b1cb2060.txt",
    ),
    "7fda165cb0559907c5195c31e131556dbafab09bfe53692b00f1e3b805f270e9": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/08d38857-18d8-406f-907b-c80142fec515.txt",
    ),
    "80c0340d8d6012b617bd791600cc9648eecd5f991d4385abd54ea3ae7bb2999a": (
        "records/track_1_short/2024-12-04_ValueEmbed/ed14c8b2-2ac1-41e0-acea-3cc55cd94f83.txt",
    ),
    "8109355d95a30e900952cdb7be2673873aea923708cf19981e202dd5ac1985cb": (
        "records/track_1_short/2024-12-10_MFUTweaks/7442abb4-a571-4340-9844-de16209c3762.txt",
    ),
    "811e0d0b8f8c7ad4b778662a7a7e65f281de7ba18a0528133a816aabe6b0fd65": (
        "records/track_1_short/2024-12-10_MFUTweaks/2d25e67e-6ab4-45ff-92e0-d223bcf1784e.txt",
    ),
    "83323b45ddf71697db3e38d4361e1b4314e4ceec5611a72772a00334d5416c7a": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/19c57414-499c-4892-b25c-a7083583fa59.txt",
    ),
    "8621da0e58ef59c8f3bacf3ca93ebf6ef18ed2ca1baefc57c5a2551646423695": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/d13cc58e-654c-432b-b1b6-1c8b8ae8a232.txt",
    ),
    "86b3ad0dc1f137e66fb9ae6bfa71a3c5eca76eab0afe1deebbfed4eddfcfcf10": (
        "records/track_1_short/2024-12-10_MFUTweaks/409647d3-2887-4760-9cb4-327d3bb219a4.txt",
    ),
    "8802f6d8def5e7f7841e9a6cf4db0b9051159ca35c6ee5dee22ccd0b20ff3a1f": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/563ca9ab-8f99-4a56-a8be-5ab3b21ac197.txt",
    ),
    "895ad278ca7ba32fd412e393054c93f7f8e7b042da20f0f46366d881ed8c6cc5": (
        "records/track_1_short/2024-12-04_ValueEmbed/e3ffb000-a388-4bdc-b88f-2f85794c13c8.txt",
    ),
    "8abb9cf0d25f4b90f4ae073dbbdbc42a916724a191b562de6e241621e7634e9c": (
        "records/track_1_short/2024-12-10_MFUTweaks/eca39347-6616-4903-ad6b-bab828aa2f78.txt",
    ),
    "8ad132da3427f98a0c49078c86a0b4d0f4c5ad90331155f3dae6e9366189eeb3": (
        "records/track_1_short/2024-12-04_ValueEmbed/87f81569-fa04-4eb3-8b75-42c116e96ba0.txt",
    ),
    "8b92ba62d30e826c49c1171bdf62be32f9c1b9cea524994a0c3273310b439b12": (
        "records/track_1_short/2024-12-04_ValueEmbed/2577721d-9ce9-400c-8902-ce95d6fbcf64.txt",
    ),
    "8b9ea15d15f2b076d37b0625c5ad6fb4fe251a1ffa143c7a6d4ed552393f46d0": (
        "records/track_1_short/2024-12-04_ValueEmbed/51b3baf0-69d6-43ee-a88b-2c5c28e3dd5b.txt",
    ),
    "8c010d4fac4b12878fce46419ee628179b38996d15ab380f1ca58a6cad31e83b": (
        "records/track_1_short/2024-12-10_MFUTweaks/0aa83756-53f0-4268-9721-db6d5985bc42.txt",
    ),
    "8cac4a5c64fd28a8a4d5d03d87478c287ea00ad419a187659ce13867480e8211": (
        "records/track_1_short/2024-12-04_ValueEmbed/d12cb409-0f5d-4624-951c-60119a482bca.txt",
    ),
    "8d38de6d7d7ac4a6eeb5e5d0587b0dbb8d52c1371f0b6d8320c3209c64314029": (
        "records/track_1_short/2024-12-04_ValueEmbed/8bd08106-6eb1-4cd1-9779-ccf1192bda1b.txt",
    ),
    "8dc8b66c9e6297f8dca3092bbe2ba13125fec69010617c164e67dc4c5f273c5b": (
        "records/track_1_short/2024-12-04_ValueEmbed/e0248b14-212b-436b-9a12-ba142d720ab4.txt",
    ),
    "8feeb5e26ef9c797f775d9f31f40ec7c05ced5c67b6fa620ff666fb0daf29ea2": (
        "records/track_1_short/2024-12-10_MFUTweaks/5175d854-1dcb-41e1-a690-b223fa69fd7f.txt",
    ),
    "8ff65c5bb5f5ae7c1958b721ce9a09aa9e8682022c72e63e78af2c80d37f2b49": (
        "records/track_1_short/2024-11-24_WindowWarmup/3151f69a-f89e-452c-ac80-b85118007583.txt",
    ),
    "9339204d2368a4675e918754caf10e807e1f68dd9be9278b2286a229c1151366": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/29354340-7020-42e4-8b06-b9a7c85e3d51.txt",
    ),
    "945dc8157d2372b893498391c8c72de03544efd68271650f18c20e96a731ff14": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/d30450c5-ecc2-426d-9375-bcf48e6123d8.txt",
    ),
    "953f814b73f33ed9c7fba1664c909b607db5edfe3039c68c66221dd82b11e0b3": (
        "records/track_1_short/2024-11-10_ScaleShortcuts/70a0ada6-8dee-4fef-8980-135379479c21.txt",
        "records/track_1_short/2024-11-14_QuantizedFP4/70a0ada6-8dee-4fef-8980-135379479c21.txt",
    ),
    "968eeb07151b1ab57206d5f85e330b1b2ec7e502d40152ad721267061905c0a7": (
        "records/track_1_short/2024-11-06_ShortcutsTweaks/dd7304a6-cc43-4d5e-adb8-c070111464a1.txt",
    ),
    "97216f1b7190c47dd34cc34af02a2ed7df3ff4825dd9c6b9a897f0be08de0bef": (
        "records/track_1_short/2024-11-03_UntieEmbed/d6b50d71-f419-4d26-bb39-a60d55ae7a04.txt",
        "records/track_1_short/2024-11-06_ShortcutsTweaks/d6b50d71-f419-4d26-bb39-a60d55ae7a04.txt",
        "records/track_1_short/2024-11-10_ScaleShortcuts/d6b50d71-f419-4d26-bb39-a60d55ae7a04.txt",
    ),
    "977a74746f7f088fe84ddab1c2fe582b5530742d7e6dc90e5a90b390f6fb4cf5": (
        "records/track_1_short/2024-12-10_MFUTweaks/76ee9a40-0f61-42bb-849b-bf46c3a3e7c9.txt",
    ),
    "9ab194b8f1388dc31ccc74a1bf5d000b59a3172758efdc7ed7e69d8d61097488": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/e276c0fa-854b-44ad-830b-cdf887eaf6c3.txt",
    ),
    "9acf87f3ac15e51c14857704ff27f7a3e4473064bc7f46d00d188d536ad5443b": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/e2c6f3ca-140e-43fa-862e-4ee48c04422e.txt",
    ),
    "9ad5ff20d3f4a7937dcf416501156d164b229c0380db41c1a99dae109780a2c1": (
        "records/track_1_short/2024-12-04_ValueEmbed/1b4db08c-46d9-4e1b-a8e6-872a685061c3.txt",
    ),
    "9ae8ba6a65d4ca58dd8f6b505ef1c327709e6bb64d03a749f425a362c4149b37": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/1b363e84-a47e-48c9-ae21-7fb825512c9a.txt",
    ),
    "9bea04e221126a353df90b7e014b26f9d83281f0ad85f4ce69f730f13512c9b8": (
        "records/track_1_short/2024-12-04_ValueEmbed/2358dd3a-8ce4-4b8a-a367-fca6dcd38343.txt",
    ),
    "9d4095110b55d03d87fffa6b08ff4c4259f72022072c36e82db4286540b8267e": (
        "records/track_1_short/2024-12-04_ValueEmbed/75a3af7b-f1a6-47dc-a989-d95e4419ff31.txt",
    ),
    "9d438e46ebece07008f5f0867357e235536d9c618c80a454a83031cce06ddf60": (
        "records/track_1_short/2024-12-04_ValueEmbed/14511f40-47db-4c94-b35b-70616770fd2d.txt",
    ),
    "9f20b531743be30f2b010c6db8b8b6828dacb82242fa63a6a4a2d7dbd42d202a": (
        "records/track_1_short/2024-12-10_MFUTweaks/e1e718d6-89dc-4794-a969-17b2977b004c.txt",
    ),
    "9f4d0d4d224fe53dccd9983cd88c969754448f68eda1fe309de744d6f4f8d039": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/7639d7d4-a962-4193-8e57-c1d76ea22f54.txt",
    ),
    "9fb23ad5440e88ed371c6c039fc3f693b7091237570f65ab542bd52892a94b48": (
        "records/track_1_short/2024-11-10_ScaleShortcuts/4897c987-9d09-435c-a23f-20585912936a.txt",
    ),
    "9fc8de3ad9d75f87209c3eb0b741ea40f78766c24553838b57b05d9fc0935c1e": (
        "records/track_1_short/2025-01-13_Fp8LmHead/c51969c2-d04c-40a7-bcea-c092c3c2d11a.txt",
    ),
    "a00d0b79556636094433f6988d3c16320655fb209f86ea9c909a0143c3c36da7": (
        "records/track_1_short/2024-12-10_MFUTweaks/d7c9acce-8b10-4f22-a505-4741319decc3.txt",
    ),
    "a092c87c944844c42d41f06e7c14c33a0f08861b4d3ca0220743ba4121ac3227": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/b7197dc5-b590-4e32-8590-a8c0076b64ab.txt",
    ),
    "a0b13b65a70a28cbe95e3fa7607cf3d7547f41a60cee4c5c3e7e7b158532fe17": (
        "records/track_1_short/2024-12-04_ValueEmbed/2d140d43-3323-408e-b559-3639c0880323.txt",
    ),
    "a20ba5a79fc820e54e2ddb9ece43e0221f35db4a0bfd6338681769c402af4080": (
        "records/track_1_short/2024-12-04_ValueEmbed/2e527b0b-3540-4bcd-a15d-955f86cb8bd2.txt",
    ),
    "a32c11e0832a6b68c9e6b860ab2456fcd71f198a6f7838a57755d5f22271b4fb": (
        "records/track_1_short/2024-12-10_MFUTweaks/2d564428-0822-4d01-a61b-f53e4cd646c6.txt",
    ),
    "a344a4ac66ae5fe4d81068b612eb7aa1d427abfb06044dfe21ae8037969bd27c": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/23ed0b57-544b-4fc5-b780-062dcf3f6f2c.txt",
    ),
    "a3783ce769e0719df6c729ff03681bd9480f5688e14ffca35220838f5ff8896b": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/4732cc5e-a214-47d6-bfce-cb4ae2f663c8.txt",
    ),
    "a3d634658b74d8bb147e7e04925ea014e8b57b12854926d6925c4b5b1d9d9493": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/c8cecdbc-504d-4df2-b844-fadc9bddabfa.txt",
    ),
    "a746f5f876e870224067b135f43cac5606bbbb9d3f131203fc3f37cd13de7cf0": (
        "records/track_1_short/2025-01-04_SoftCap/31d6c427-f1f7-4d8a-91be-a67b5dcd13fd.txt",
    ),
    "a78a1b8f9c1f1e4553e8bef4b11e44d1a59196d6a2cc7e4b41bf3f7967816c73": (
        "records/track_1_short/2024-10-09_SOAP/5bdc3988-496c-4232-b4ef-53764cb81c92.txt",
    ),
    "a7900a9a2122942385a80afc834b2c9eb4b24071badbeccbc653661261819d91": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/59ba1f2d-a3b7-4fa8-b099-f13b838470ee.txt",
    ),
    "a8c28b6554a37e16083d5520fd40bc11408fb6033dfb9e7a857d6c6fdad0e128": (
        "records/track_1_short/2024-12-10_MFUTweaks/ed5a4791-fc3b-4fbf-b871-5c1c34f19b5a.txt",
    ),
    "ac5f7daf7e8eb793b935f894915c7e89cf362eb5e5a004a623d08b8676cdf993": (
        "records/track_1_short/2024-11-10_ScaleShortcuts/3e55eb2e-6261-466a-b1e9-2b31f56fb16a.txt",
    ),
    "ad32d75709a482893e0df9d4480ee0b1cdebddc8d7803618d4da6d86d1095b3b": (
        "records/track_1_short/2024-10-29_Optimizers/95a9fd44-7c13-49c7-b324-3e7d9e23a499.txt",
    ),
    "ad63c6dccb4b8be907b35655337f36fb150a42744a347439f66bcfcf036add20": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/8b82b55d-6955-4100-a1a9-5630cb85683c.txt",
    ),
    "ae1f88a5bc8aa785206341d1ad4ed10c8b40be583ab5d1ad0088f4decd98bdc5": (
        "records/track_1_short/2024-12-04_ValueEmbed/968f73e2-b588-4102-80b0-996bae126be1.txt",
    ),
    "b1a79d511c8b887d1ff0d90070cb1244fccaa8a916f85206318d820468c676ad": (
        "records/track_1_short/2025-01-26_BatchSize/c44090cc-1b99-4c95-8624-38fb4b5834f9.txt",
    ),
    "b1c737ce9fccd3528eb28de4a115ba476748bd32f7004a4f4d202c5eca8f5d44": (
        "records/track_1_short/2024-12-04_ValueEmbed/2f4ce5fe-b625-41b4-acbb-d4c20b591ead.txt",
    ),
    "b5a7eadc5b8a5495f1f9f3b50f2b2bc2833f32fb515059a3ee11b029e8214479": (
        "records/track_1_short/2024-12-10_MFUTweaks/c01ffedd-443f-421b-b7ca-492e8187557b.txt",
    ),
    "b5da7bf865582bbe303d7b5ddd2fd75f56a80cfc5256101ea0c0f196f2a6f555": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/43ed2395-9260-48d6-9ab2-dd6f7f4684b5.txt",
    ),
    "b634fea85c873b0eb0e046594f1cbf8aa5d73be4f9996ddf05058c2e99f69552": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/94df9d58-590d-4171-a015-e59e144d7206.txt",
    ),
    "b804e93a0e5b5c949c138f67614bbb5e0ab7db1210eda3449a92676ee8053413": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/60adb82c-ba8d-41b0-81fc-565439384b72.txt",
    ),
    "b82c4e0919443ef623ae0006e8a313bef1263992bcb8f924cff72c368141cf61": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/5dc85466-81b7-4770-ba8d-6937f4400758.txt",
    ),
    "bafb0b6fdbc7bc136bcff365bead2db0dadee48136b86e32259308387c46fa35": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/26fa5797-44d0-4a63-9e57-f435f2f59aad.txt",
    ),
    "bbcd103eac062c494762c19d1686c7e1fd1b453146b6a98ef060fdea7271949d": (
        "records/track_1_short/2024-12-04_ValueEmbed/eecabe35-2224-4988-9910-8e8434a0c281.txt",
    ),
    "bc1f3460d37f4fdaebb8c6b9b49a59a3e3e45e956cde0af2ffc3a455cb4d2c5e": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/4bcd20c5-9ffd-40e9-8d9a-6d9d647b16ba.txt",
    ),
    "bd00e5bc10d1f639e500da0fa443eb41c63dde1f0043d928e30c293d024dfd1d": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/4de826f5-a244-490f-8025-5f0d370bd68a.txt",
    ),
    "bd1e222cc8356ef970b39f6a23c2adf84e6da326ff3affb7b26901a87360f61e": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/5fcbae90-4380-412e-8209-51fccc183040.txt",
    ),
    "bd43843e92b474e32492ae13352ec77b439a7a3dd5d98fd399ae0af0b3e30a7f": (
        "records/track_1_short/2024-11-24_WindowWarmup/ae732e01-04b2-4665-b570-a77210e73e28.txt",
    ),
    "c0d2e2b43cac18b38b0ce6af12ba3a2476f1079c16cf1704472fe2d587659240": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/68b508e5-a986-40d7-a307-21c282389be5.txt",
    ),
    "c187107432804414a88237e2ef3cc499c34d44125ec8792a0f804db80e6f474f": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/abf007e8-6370-4987-bd1a-85bff108fe5e.txt",
    ),
    "c1d2e0be791ab9028ae4068aee331c2756e650ac719538b80a7079c16a7f0ace": (
        "records/track_1_short/2024-12-04_ValueEmbed/949e5cfd-cb9c-48e7-a888-551981582a9b.txt",
    ),
    "c2368d7b4b76d54f3b1a8c702a0d315b62eb14c378912f2bb3b30597edc0396e": (
        "records/track_1_short/2024-12-10_MFUTweaks/ea08b5fb-abc8-46b0-a643-4561d621d78d.txt",
    ),
    "c806d8be98acd663275981108a828a07846cb315909622db27554ba9e0e14fda": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/554a738b-571d-4da1-8556-393e7592eda7.txt",
    ),
    "c9d872b5d763bac338c631d61e3c08d2cf20de8c39ddd293d24e5c26aa03ec6e": (
        "records/track_1_short/2024-11-24_WindowWarmup/dca62101-15d4-4c76-842e-99213fa2508b.txt",
    ),
    "cd0298b753c106298cca4b09fe79df7a13e664e8a1abfbb6cc0d1585bd5348e6": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/257dc15f-5bfd-4c0b-9349-a46b3c13d5ef.txt",
    ),
    "cd4183e0b1f5ed0d492e484f6341031810222d9894ede097018ef00f20b2068c": (
        "records/track_1_short/2024-12-10_MFUTweaks/a55c6778-e76a-44bc-a0e1-68c0e7580096.txt",
    ),
    "cdc10c790a45541de98ad74e09a628f71eca0de63726ce2c7e215c2ca90b8f9d": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/81074c42-378a-4231-a37d-10f5c477a78c.txt",
    ),
    "ce3625bc231de0ef78bb7e322baf841c99fe3a8f75993e17d3b7e89bd9d2c87c": (
        "records/track_1_short/2025-01-16_Sub3Min/1d3bd93b-a69e-4118-aeb8-8184239d7566.txt",
    ),
    "cfacb37b985368c2e23ba090d52ccb3828bfe84f4355196345c549c90337e950": (
        "records/track_1_short/2024-12-10_MFUTweaks/052953d9-0495-43db-9d15-ae98fff06f18.txt",
    ),
    "d01945e58e85aad54bc7d1be183e7c3dc64bc8f5474e0047c739edf8cde7b303": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/52275a2c-80fd-4743-ad16-1d5098d97821.txt",
    ),
    "d0c1831ab6a1c97cb135bea07cd2c9fa941d53103ec6a06f557b2eaa220234ca": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/88baa340-752f-4874-9dc8-f2f7831d78e4.txt",
    ),
    "d1a461a1dcb44e4fb8fbd7256165443578b79b009638287ee26313f2ae2ae3a9": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/e5589f56-4312-44f2-9254-95304cae10cf.txt",
    ),
    "d3fce3ec6bd22847dd99e10c8dc9718140f76eb69a17a1955438c6463fe46091": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/1a1fde38-fd1f-4cc9-a648-74b8d6dab734.txt",
    ),
    "d5890927e368b2a9d83a5005ec0f8d268b994efe5ca1b72496a9162256b78faa": (
        "records/track_1_short/2024-12-10_MFUTweaks/217c8375-d34f-45ee-9bee-ca8f9a6608da.txt",
    ),
    "d8695677cd0ad2dc0796707be6f0203a22ede85cd738b9e858bac52505fbe10d": (
        "records/track_1_short/2024-12-04_ValueEmbed/c8e1a7d3-a37e-4a88-b28a-3afb2d8089ca.txt",
    ),
    "d90aa3038f88c6f7baa68707d10658b19b9dde3d5a7414d878d893229f053752": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/14dfd7b3-d65a-4813-8327-03a9f1bf9f6e.txt",
    ),
    "d95917968ecefd6022f42f21913208b726df9fdf990ad05502aa18d6e3c83775": (
        "records/track_1_short/2024-12-04_ValueEmbed/4f8bcdc3-18cf-4743-895e-1deb08696fe7.txt",
    ),
    "d97405b18f740ee5d077557ea9e8146a8499ee7d8291af9033e861361467ed04": (
        "records/track_1_short/2024-12-10_MFUTweaks/a3e860f0-98ed-4845-9aee-cccd01fd9b5b.txt",
    ),
    "daa5d7b2afeca7160c9a16e214a9a01105e1b31fa612f529a52f17b45221b8c0": (
        "records/track_1_short/2024-12-10_MFUTweaks/9323a20a-8f7f-4549-8997-dde75dfc6ec6.txt",
    ),
    "dc92b90b3345afffce9b29bc35f27a0c5cba69f63f6332161272f291d127c590": (
        "records/track_1_short/2024-10-14_ModernArch/dabaaddd-237c-4ec9-939d-6608a9ed5e27.txt",
    ),
    "e0f28a2b4013640ae06733c48671b854a87d33fd3fc3a2d14dd436923060fdc3": (
        "records/track_1_short/2024-11-09_Replicateleloykun/1621af10-aa0c-42af-bf54-8a773c63a2af.txt",
    ),
    "e1095be032d8c88436fef60ab740e6507f2f669bab44bf4408806be925a9afa4": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/5bd46aa9-aaa1-4390-b355-41b730732b10.txt",
    ),
    "e1e83b520f618726161b4bf3312c16a464927eb6d947aa80305b605227f6b410": (
        "records/track_1_short/2024-11-06_ShortcutsTweaks/4a71cc92-0f43-4058-a033-23e85c1e98f1.txt",
    ),
    "e3acfe77804c423d552b9cc3523307617d660684f2423a511e4d58dd1e291e26": (
        "records/track_1_short/2024-12-04_ValueEmbed/bb60727f-25b8-4e01-bf08-293aa3860e7c.txt",
    ),
    "e76ffc095b87250be162f3d57ff48294d2de59c96510d2b3c252c1da4d2a1f67": (
        "records/track_1_short/2024-12-10_MFUTweaks/c80b525d-de02-4fb0-b4ae-44f3308474ea.txt",
    ),
    "e934707bf4d5b73b1b4b69ffbe735cb8803b8d30174aea8ce51571f110570677": (
        "records/track_1_short/2024-11-19_FlexAttention/8384493d-dba9-4991-b16b-8696953f5e6d.txt",
    ),
    "eb5e920049107a0566fcce595823f1b7923affbd472658355edd9594194133a1": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/938ecd23-aaa8-4975-b6da-9407ab45e0f9.txt",
    ),
    "edd5b650d0c6a38362b9372674bb1d795b7edf97048a73cdd2903388f70e8b48": (
        "records/track_1_short/2024-12-04_ValueEmbed/19bb65fb-f903-4a41-803b-fbd57562f653.txt",
    ),
    "eee7e9b1f88ee6dcfcd9a9f5a66e4f2ab52928788aee1b556f409aaa57885232": (
        "records/track_1_short/2024-11-14_QuantizedFP4/932bbe0e-41c3-4a5b-94bd-4ea3350909bd.txt",
    ),
    "ef51ba31ef0973a67807f4ca3102a51492afa7f75eb8cd5a4b7511cf66ea50fd": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/8b074f6f-a4ad-42ae-9460-679426524ddb.txt",
    ),
    "f142ac779ad3ddebcd23b19a9353eae1e3564f53b4f2c19be827b278ca80ccd0": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/9e4f1bfe-0f1a-4bd8-af1b-072dcaa61c4c.txt",
    ),
    "f209540328652255f3f0ec28bcfa8cb75b880f50e039a918951dc4d5bd9cf506": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/5e28cee7-fc40-4593-bc83-a22495bfaacc.txt",
    ),
    "f2b32a98ecf2359e630e37da8442b0a4de44cc2a26a3c0bcf8e281d6fdfaa4ca": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/bbc9dd90-96c5-480b-984c-594145555821.txt",
    ),
    "f3b5036f21223424d6c72d118d233f5ad8838643da38eea6d04140356bf1d0f3": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/f9a93608-ed4e-46ab-9c06-07f90f1328a6.txt",
    ),
    "f42a977cd8c3bf1b276896de768546fdca166ae86eba173118575e848cf279d9": (
        "records/track_1_short/2024-12-04_ValueEmbed/c249f3c7-b947-4b6f-8a42-56e97ef7712e.txt",
    ),
    "f4e2168a89174a28f69d9919be544413f19f245af71d93a2653a9a938f39a738": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/6175f2f0-8526-4f20-86d9-d7c2a6dcda19.txt",
    ),
    "f63b58ef8541152c73a72fce01e7bcf842ccb3b7189ed462ce4d93405fd679fa": (
        "records/track_1_short/2024-11-24_WindowWarmup/4428858e-7cb8-4a25-a936-818d8f28de51.txt",
    ),
    "f694232df711afd63164687f5ae385b661801325c98ef062e5a5ef17612ab510": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/83fd4151-f2d1-4d8d-ad31-5546543072f3.txt",
    ),
    "f786ac775e8b945c19a37414f5236d2579ec7d6ca1d705777a05ade936ff4287": (
        "records/track_1_short/2024-12-04_ValueEmbed/385d2312-0cf9-48c3-af3f-35c12c12a38d.txt",
    ),
    "f8ea2894949c8f1feb21d6ddae13f347052ca17f650705d16d2031b4d236b615": (
        "records/track_1_short/2024-12-08_UNetValueEmbedsTweaks/f2fda86f-4418-4ff8-a3a3-8112731cbcf9.txt",
    ),
    "fba91658b434cf6edfe96b7d3e082e7ce010a1034a1b4f03f7ba0861ce16f408": (
        "records/track_1_short/2024-10-20_ScaleUp1B/87bd51fd-6203-4c88-b3aa-8a849a6a83ca.txt",
    ),
    "fcd9ca934c6ac0f5b7f9b95506f44c8d926b3d5b7aa0fe49c4aaf502cb165d9e": (
        "records/track_1_short/2024-12-10_MFUTweaks/7787c6ea-33f2-4c63-a345-a8e8a830e595.txt",
    ),
    "fd2999eeb1b51a1298b8259029e78dc9dc060d4e947da43c11a74a37446dc14f": (
        "records/track_1_short/2024-12-10_MFUTweaks/a880e114-d133-469c-85db-ab58bc507d04.txt",
    ),
}
EARLY_LOG_SHA256 = frozenset(EARLY_LOGS)


def is_early(sha256: str | None, path: str | None) -> bool:
    """Whether a log of these bytes (its sha256) at this path is one of the early logs."""
    return path in EARLY_LOGS.get(sha256 or "", ())
